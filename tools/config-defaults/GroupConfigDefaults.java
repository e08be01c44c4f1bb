// Prints the per-group configs (ConfigResource type GROUP) a Kafka broker describes and
// checks, read from Kafka's own GroupConfig.CONFIG_DEF: one tab-separated line each, in the
// order the ConfigDef defines them (the order Kafka parses and so reports a bad value in):
// name, type, default (`\N`: none), whether Kafka keeps it internal (described only when set),
// its broker synonym (GroupConfig.brokerSynonym: group.share.record.lock.duration.ms for
// share.record.lock.duration.ms; `-`: none) and that broker config's default, its ConfigDef validator (`at-least:N`,
// `one-of:A,B`, `share-reset` for the share reset strategy's, `list`, `-`), and the broker
// configs bounding a value (min config, its default, max config, its default; `-`: none)
// with their defaults from the broker's ConfigDef. Which broker configs bound which group
// config is a fact of GroupConfig.validate, written below by hand and checked against a real
// broker by cluster/tests/group_configs.rs. Run by tools/config-defaults/run.sh.
//
// Facts only: names, types and values, no text from Kafka.

import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.server.config.AbstractKafkaConfig;

public class GroupConfigDefaults {
    // group config -> {min broker config, max broker config} (null: no such bound).
    private static final Map<String, String[]> BOUNDS = Map.ofEntries(
        Map.entry("consumer.heartbeat.interval.ms", new String[] {
            "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"}),
        Map.entry("consumer.session.timeout.ms", new String[] {
            "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"}),
        Map.entry("consumer.assignment.interval.ms", new String[] {
            "group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms"}),
        Map.entry("share.heartbeat.interval.ms", new String[] {
            "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"}),
        Map.entry("share.session.timeout.ms", new String[] {
            "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"}),
        Map.entry("share.record.lock.duration.ms", new String[] {
            "group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"}),
        Map.entry("share.delivery.count.limit", new String[] {
            "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"}),
        Map.entry("share.partition.max.record.locks", new String[] {
            "group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks"}),
        Map.entry("share.assignment.interval.ms", new String[] {
            "group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms"}),
        Map.entry("streams.heartbeat.interval.ms", new String[] {
            "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"}),
        Map.entry("streams.session.timeout.ms", new String[] {
            "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"}),
        Map.entry("streams.num.standby.replicas", new String[] {null, "group.streams.max.standby.replicas"}),
        Map.entry("streams.assignment.interval.ms", new String[] {
            "group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms"}),
        Map.entry("streams.task.offset.interval.ms", new String[] {"group.streams.min.task.offset.interval.ms", null}),
        Map.entry("streams.num.warmup.replicas", new String[] {null, "group.streams.max.warmup.replicas"}));

    public static void main(String[] args) {
        Map<String, ConfigDef.ConfigKey> broker = AbstractKafkaConfig.CONFIG_DEF.configKeys();
        StringBuilder out = new StringBuilder();
        for (ConfigDef.ConfigKey key : GroupConfig.CONFIG_DEF.configKeys().values()) {
            String value = key.hasDefault() && key.defaultValue != null
                ? ConfigDef.convertToString(key.defaultValue, key.type) : "\\N";
            if (value.contains("\t") || value.contains("\n")) {
                throw new IllegalStateException("a default with a tab or newline: " + key.name);
            }
            String[] bounds = BOUNDS.getOrDefault(key.name, new String[] {null, null});
            out.append(key.name).append('\t').append(key.type).append('\t').append(value)
               .append('\t').append(GroupConfig.isInternal(key.name))
               .append('\t').append(synonym(broker, key.name))
               .append('\t').append(validator(key))
               .append('\t').append(bound(broker, bounds[0]))
               .append('\t').append(bound(broker, bounds[1])).append('\n');
        }
        System.out.print(out);
    }

    private static String synonym(Map<String, ConfigDef.ConfigKey> broker, String name) {
        String synonym = GroupConfig.brokerSynonym(name).orElse(null);
        if (synonym == null) return "-\t-";
        ConfigDef.ConfigKey key = broker.get(synonym);
        if (key == null) throw new IllegalStateException("no broker config " + synonym);
        String value = key.hasDefault() && key.defaultValue != null
            ? ConfigDef.convertToString(key.defaultValue, key.type) : "\\N";
        return synonym + "\t" + value;
    }

    private static String validator(ConfigDef.ConfigKey key) {
        if (key.validator == null) return "-";
        String kind = key.validator.getClass().getName();
        String shown = key.validator.toString();
        switch (kind) {
            case "org.apache.kafka.common.config.ConfigDef$Range":
                if (!shown.startsWith("[") || !shown.endsWith(",...]")) {
                    throw new IllegalStateException(key.name + ": a range other than at-least: " + shown);
                }
                return "at-least:" + shown.substring(1, shown.length() - ",...]".length());
            case "org.apache.kafka.common.config.ConfigDef$ValidString":
                return "one-of:" + shown.substring(1, shown.length() - 1).replace(", ", ",");
            case "org.apache.kafka.common.config.ConfigDef$ValidList":
                return "list";
            case "org.apache.kafka.coordinator.group.ShareGroupAutoOffsetResetStrategy$Validator":
                return "share-reset";
            default:
                throw new IllegalStateException(key.name + ": a validator this table does not know: " + kind);
        }
    }

    private static String bound(Map<String, ConfigDef.ConfigKey> broker, String name) {
        if (name == null) return "-\t-";
        ConfigDef.ConfigKey key = broker.get(name);
        if (key == null || !key.hasDefault() || key.defaultValue == null) {
            throw new IllegalStateException("no broker config with a default: " + name);
        }
        return name + "\t" + ConfigDef.convertToString(key.defaultValue, key.type);
    }
}
