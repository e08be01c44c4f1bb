package kafkacodec.clients;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * A group's configs (ConfigResource type GROUP) through the Java AdminClient, printed one fact
 * a line so that the output against the cluster can be compared with the output against a
 * real Kafka broker (cluster/tests/group_configs.rs): every config of a group never configured
 * (value, source, read-only, sensitive, type, synonyms); four
 * overrides set by incrementalAlterConfigs and described again; the refusals (an unknown name,
 * values outside the broker's group.* bounds or not of the config's values, an empty
 * group name) with their exception class and message; an override
 * deleted; and what is left of the overrides once the group is made and deleted.
 *
 * <p>Usage: ClusterGroupConfigs BOOTSTRAP GROUP TOPIC
 */
public final class ClusterGroupConfigs {
    private ClusterGroupConfigs() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: ClusterGroupConfigs BOOTSTRAP GROUP TOPIC");
            System.exit(2);
        }
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]))) {
            run(admin, args[1], args[2]);
        }
    }

    private static void run(Admin admin, String group, String topic) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        describe(admin, resource, "fresh");

        set(admin, resource, "set", List.of(
            op("share.auto.offset.reset", "earliest", AlterConfigOp.OpType.SET),
            op("share.record.lock.duration.ms", "15000", AlterConfigOp.OpType.SET),
            op("consumer.session.timeout.ms", "50000", AlterConfigOp.OpType.SET),
            op("share.isolation.level", "read_committed", AlterConfigOp.OpType.SET)));
        describe(admin, resource, "overridden");

        set(admin, resource, "unknown", List.of(op("no.such.config", "1", AlterConfigOp.OpType.SET)));
        set(admin, resource, "internal", List.of(op("consumer.assignor.offload.enable", "false", AlterConfigOp.OpType.SET)));
        set(admin, resource, "below-min", List.of(op("share.record.lock.duration.ms", "1000", AlterConfigOp.OpType.SET)));
        set(admin, resource, "above-max", List.of(op("consumer.session.timeout.ms", "70000", AlterConfigOp.OpType.SET)));
        set(admin, resource, "heartbeat-above-max", List.of(op("share.heartbeat.interval.ms", "16000", AlterConfigOp.OpType.SET)));
        set(admin, resource, "count-above-max", List.of(op("share.delivery.count.limit", "11", AlterConfigOp.OpType.SET)));
        set(admin, resource, "count-below-def-min", List.of(op("share.delivery.count.limit", "1", AlterConfigOp.OpType.SET)));
        set(admin, resource, "bad-reset", List.of(op("share.auto.offset.reset", "sometimes", AlterConfigOp.OpType.SET)));
        set(admin, resource, "by-duration", List.of(op("share.auto.offset.reset", "by_duration:PT1H", AlterConfigOp.OpType.SET)));
        set(admin, resource, "bad-duration", List.of(op("share.auto.offset.reset", "by_duration:-PT1H", AlterConfigOp.OpType.SET)));
        set(admin, resource, "not-an-int", List.of(op("share.session.timeout.ms", "soon", AlterConfigOp.OpType.SET)));
        set(admin, resource, "append", List.of(op("streams.rack.aware.assignment.tags", "zone", AlterConfigOp.OpType.APPEND)));
        set(admin, resource, "validate-only-bad", List.of(op("share.delivery.count.limit", "3", AlterConfigOp.OpType.SET),
            op("share.session.timeout.ms", "1", AlterConfigOp.OpType.SET)));
        set(admin, new ConfigResource(ConfigResource.Type.GROUP, ""), "empty-name",
            List.of(op("share.delivery.count.limit", "3", AlterConfigOp.OpType.SET)));
        describeOne(admin, new ConfigResource(ConfigResource.Type.GROUP, ""), "empty-name");

        set(admin, resource, "delete", List.of(op("share.record.lock.duration.ms", null, AlterConfigOp.OpType.DELETE)));
        describe(admin, resource, "after-delete");

        // Make the group (an empty share group, by altering its offsets), then delete it.
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        admin.alterShareGroupOffsets(group, Map.of(new TopicPartition(topic, 0), 0L)).all().get();
        try {
            admin.deleteShareGroups(List.of(group)).all().get();
            System.out.println("deleted group: ok");
        } catch (ExecutionException e) {
            System.out.println("deleted group: " + e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        }
        describe(admin, resource, "after-group-deleted");
    }

    private static AlterConfigOp op(String name, String value, AlterConfigOp.OpType type) {
        return new AlterConfigOp(new ConfigEntry(name, value), type);
    }

    private static void set(Admin admin, ConfigResource resource, String what, Collection<AlterConfigOp> ops) {
        try {
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
            System.out.println("alter " + what + ": ok");
        } catch (ExecutionException e) {
            System.out.println("alter " + what + ": " + e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void describeOne(Admin admin, ConfigResource resource, String what) {
        try {
            Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
            System.out.println("describe " + what + ": " + config.entries().size() + " configs");
        } catch (ExecutionException e) {
            System.out.println("describe " + what + ": " + e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage());
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void describe(Admin admin, ConfigResource resource, String what) throws Exception {
        DescribeConfigsOptions options = new DescribeConfigsOptions().includeSynonyms(true);
        Config config = admin.describeConfigs(List.of(resource), options).all().get().get(resource);
        Map<String, ConfigEntry> sorted = new TreeMap<>();
        for (ConfigEntry entry : config.entries()) {
            sorted.put(entry.name(), entry);
        }
        System.out.println("describe " + what + ": " + sorted.size() + " configs");
        for (ConfigEntry entry : sorted.values()) {
            List<String> synonyms = new ArrayList<>();
            for (ConfigEntry.ConfigSynonym synonym : entry.synonyms()) {
                synonyms.add(synonym.name() + "=" + synonym.value() + "@" + synonym.source());
            }
            System.out.println("  " + entry.name() + "=" + entry.value() + " " + entry.source() + " " + entry.type()
                + (entry.isReadOnly() ? " read-only" : "") + (entry.isSensitive() ? " sensitive" : "")
                + " " + synonyms);
        }
    }
}
