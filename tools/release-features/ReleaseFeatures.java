// Prints the feature levels (KIP-584) a broker of one KRaft release answers in ApiVersions
// v3+, freshly formatted with the defaults: one line per feature, tab-separated,
//
//   supported NAME MIN MAX   in the order the broker's answer lists them
//   finalized NAME LEVEL     in the order the broker's answer lists them
//
// Run by tools/release-features/run.sh in Java's single-file source mode with one release's
// jars on the class path (kafka_2.13 or kafka-server, kafka-server-common, kafka-clients,
// scala-library). Reflection, because the classes moved over the releases:
//
// - supported: the broker's own `BrokerFeatures.defaultSupportedFeatures` (unstable
//   versions off, as `unstable.feature.versions.enable` defaults), Scala `kafka.server` up
//   to 3.9, Java `org.apache.kafka.server` from 4.0; its map's order is the answer's order;
// - finalized: what `kafka-storage format --standalone` writes and the broker then reports:
//   `metadata.version` at the release's latest production level (`latestProduction()`,
//   else `LATEST_PRODUCTION`, else 3.3's `latest()`); each production feature
//   (`Features` 3.8-3.9, `Feature` from 4.0) at its default level for that metadata version
//   (`defaultValue`/`defaultLevel`), left out at 0; `kraft.version` at its highest
//   supported level (`--standalone` and `--initial-controllers` format a dynamic quorum),
//   not stored with the others but added beside them. The order is that of the broker's
//   maps: the stored levels in a HashMap, copied into another, `kraft.version` and then
//   `metadata.version` put into it (Kafka's `FinalizedFeatures`).
//
// Facts only: names and numbers, no text from Kafka.

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class ReleaseFeatures {
    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();

        Class<?> brokerFeatures = load("org.apache.kafka.server.BrokerFeatures", "kafka.server.BrokerFeatures");
        Object supported = method(brokerFeatures, "defaultSupportedFeatures", boolean.class) != null
                ? method(brokerFeatures, "defaultSupportedFeatures", boolean.class).invoke(null, false)
                : brokerFeatures.getMethod("defaultSupportedFeatures").invoke(null);
        Map<?, ?> ranges = (Map<?, ?>) supported.getClass().getMethod("features").invoke(supported);
        Map<String, Short> supportedMax = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : ranges.entrySet()) {
            Object range = entry.getValue();
            short min = ((Number) range.getClass().getMethod("min").invoke(range)).shortValue();
            short max = ((Number) range.getClass().getMethod("max").invoke(range)).shortValue();
            out.append("supported\t").append(entry.getKey()).append('\t').append(min).append('\t')
               .append(max).append('\n');
            supportedMax.put((String) entry.getKey(), max);
        }

        Class<?> metadataVersion = Class.forName("org.apache.kafka.server.common.MetadataVersion");
        Object latest;
        if (method(metadataVersion, "latestProduction") != null) {
            latest = metadataVersion.getMethod("latestProduction").invoke(null);
        } else if (field(metadataVersion, "LATEST_PRODUCTION") != null) {
            latest = field(metadataVersion, "LATEST_PRODUCTION").get(null);
        } else {
            latest = metadataVersion.getMethod("latest").invoke(null);
        }
        short metadataLevel = ((Number) metadataVersion.getMethod("featureLevel").invoke(latest)).shortValue();
        String metadataName = (String) metadataVersion.getField("FEATURE_NAME").get(null);

        Map<String, Short> stored = new HashMap<>();
        Class<?> features = load("org.apache.kafka.server.common.Feature", "org.apache.kafka.server.common.Features");
        // 3.6-3.7 have a class named Features that is not the enum.
        if (features != null && features.isEnum()) {
            Method defaultLevel = method(features, "defaultLevel", metadataVersion);
            if (defaultLevel == null) defaultLevel = features.getMethod("defaultValue", metadataVersion);
            Method name = features.getMethod("featureName");
            for (Object feature : (List<?>) features.getField("PRODUCTION_FEATURES").get(null)) {
                String featureName = (String) name.invoke(feature);
                if (featureName.equals("kraft.version")) continue;
                short level = ((Number) defaultLevel.invoke(feature, latest)).shortValue();
                if (level > 0) stored.put(featureName, level);
            }
        }
        Map<String, Short> finalized = new HashMap<>(stored);
        Short kraft = supportedMax.get("kraft.version");
        if (kraft != null && kraft > 0) finalized.put("kraft.version", kraft);
        finalized.put(metadataName, metadataLevel);
        for (Map.Entry<String, Short> entry : finalized.entrySet()) {
            out.append("finalized\t").append(entry.getKey()).append('\t').append(entry.getValue())
               .append('\n');
        }
        System.out.print(out);
    }

    /** The first of `names` this release has, or null. */
    private static Class<?> load(String... names) {
        for (String name : names) {
            try {
                return Class.forName(name);
            } catch (ClassNotFoundException absent) {
                // Try the next.
            }
        }
        return null;
    }

    private static Method method(Class<?> type, String name, Class<?>... parameters) {
        try {
            return type.getMethod(name, parameters);
        } catch (NoSuchMethodException absent) {
            return null;
        }
    }

    private static Field field(Class<?> type, String name) {
        try {
            return type.getField(name);
        } catch (NoSuchFieldException absent) {
            return null;
        }
    }
}
