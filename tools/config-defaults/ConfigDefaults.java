// Prints the configs a Kafka broker describes (DescribeConfigs) with their default values,
// read from Kafka's own ConfigDefs: every topic config (LogConfig) with the default a broker
// with default settings gives it (the first of its broker synonyms, such as
// log.retention.hours for retention.ms, that has a default, converted as the broker converts
// it; else the topic config's own default), and every broker config (AbstractKafkaConfig,
// internal ones left out as DescribeConfigs leaves them out) with its default and whether it
// can be changed without a restart (DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS). One
// tab-separated line each: scope (topic or broker), name, type, default (`\N`: none),
// sensitive (PASSWORD type), read-only, and a topic config's primary broker synonym
// (ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS: log.retention.ms for retention.ms; `-`:
// none), the one a broker names in its synonyms when it has a value. Run by
// tools/config-defaults/run.sh in Java's single-file source mode with the broker's jars on
// the class path.
//
// Facts only: names, types and values, no text from Kafka.

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;

public class ConfigDefaults {
    public static void main(String[] args) {
        Map<String, ConfigDef.ConfigKey> broker = AbstractKafkaConfig.CONFIG_DEF.configKeys();
        StringBuilder out = new StringBuilder();
        Map<String, ConfigDef.ConfigKey> topic = LogConfig.configKeys();
        for (String name : new TreeMap<>(topic).keySet()) {
            if (!LogConfig.nonInternalConfigNames().contains(name)) continue;
            ConfigDef.ConfigKey key = topic.get(name);
            String value = null;
            boolean found = false;
            String primary = ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS.getOrDefault(name, "-");
            List<ConfigSynonym> synonyms =
                ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS.getOrDefault(name, List.of());
            for (ConfigSynonym synonym : synonyms) {
                ConfigDef.ConfigKey serverKey = broker.get(synonym.name());
                if (serverKey != null && serverKey.hasDefault() && serverKey.defaultValue != null) {
                    value = synonym.converter().apply(
                        ConfigDef.convertToString(serverKey.defaultValue, serverKey.type));
                    found = true;
                    break;
                }
            }
            if (!found && key.hasDefault() && key.defaultValue != null) {
                value = ConfigDef.convertToString(key.defaultValue, key.type);
            }
            line(out, "topic", name, key.type, value, false, primary);
        }
        for (String name : new TreeMap<>(broker).keySet()) {
            ConfigDef.ConfigKey key = broker.get(name);
            if (key.internalConfig) continue;
            String value = key.hasDefault() && key.defaultValue != null
                ? ConfigDef.convertToString(key.defaultValue, key.type) : null;
            boolean readOnly = !DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS.contains(name);
            line(out, "broker", name, key.type, value, readOnly, "-");
        }
        System.out.print(out);
    }

    private static void line(StringBuilder out, String scope, String name, ConfigDef.Type type,
                             String value, boolean readOnly, String from) {
        boolean sensitive = type == ConfigDef.Type.PASSWORD;
        String shown = value == null || sensitive ? "\\N" : value;
        if (shown.contains("\t") || shown.contains("\n")) {
            throw new IllegalStateException("a default with a tab or newline: " + name);
        }
        out.append(scope).append('\t').append(name).append('\t').append(type).append('\t')
           .append(shown).append('\t').append(sensitive).append('\t').append(readOnly)
           .append('\t').append(from).append('\n');
    }
}
