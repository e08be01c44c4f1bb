// Prints the API versions one kafka-clients release defines, as its brokers listed them in
// ApiVersions (unstable versions left out, as a broker with the default
// `unstable.api.versions.enable=false` leaves them out): API key, lowest, highest, the
// enum name and the listeners that listed it, tab-separated, one line per API. Run by tools/release-api-versions/run.sh in
// Java's single-file source mode with one release's kafka-clients jar (and slf4j-api) on the
// class path. Reflection, because the way a release states its versions changed over the
// years:
//
// - 0.11 and later: `ApiKeys.oldestVersion()` and `latestVersion()` (3.5 and later:
//   `latestVersion(false)` where the release has it: the highest stable version);
// - 0.8.2 to 0.10.2: `Protocol.REQUESTS[key]`, one request schema per version (null below
//   the lowest), which is what 0.10's brokers listed in ApiVersions.
//
// The listeners (fifth column) are the kinds of node whose ApiVersions listed the API, as
// each release's `ApiVersionsResponse` built the answer: `Z` a ZooKeeper-mode broker, `B` a
// KRaft broker, `C` a KRaft controller, `-` none of them:
//
// - 2.8 and later: `ApiKeys.apisForListener(ListenerType)` for each of `ZK_BROKER` (gone
//   from 4.0, which has no ZooKeeper mode), `BROKER` and `CONTROLLER`, the set each
//   listener's `ApiVersionsResponse.filterApis` starts from;
// - 2.7: `ApiKeys.enabledApis()` (the `isEnabled` flag: 2.7 defined the Raft APIs but its
//   brokers did not list them), a ZooKeeper broker's only;
// - before: every API the release defines, a ZooKeeper broker's.
//
// The `minRequiredInterBrokerMagic` filter of those answers keeps every API at the default
// message format (the newest), so it is not applied.
//
// A sixth column, when a release's brokers listed a lower version than they served: 4.0
// and later list Produce from `ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION` (0, for
// librdkafka's sake, KAFKA-18659) while refusing the versions below `oldestVersion()`.
//
// Facts only: numbers and names, no text from Kafka.

import java.lang.reflect.Field;
import java.lang.reflect.Method;

public class ReleaseApiVersions {
    public static void main(String[] args) throws Exception {
        Class<?> apiKeys = Class.forName("org.apache.kafka.common.protocol.ApiKeys");
        Field id = apiKeys.getField("id");
        Method oldest = method(apiKeys, "oldestVersion");
        Method latestStable = method(apiKeys, "latestVersion", boolean.class);
        Method latest = method(apiKeys, "latestVersion");
        Short produceListedFrom = null;
        try {
            produceListedFrom = apiKeys.getField("PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION").getShort(null);
        } catch (NoSuchFieldException absent) {
            // Listed as served.
        }
        Object[] requests = null;
        if (oldest == null) {
            Class<?> protocol = Class.forName("org.apache.kafka.common.protocol.Protocol");
            requests = (Object[]) protocol.getField("REQUESTS").get(null);
        }
        StringBuilder out = new StringBuilder();
        for (Object api : apiKeys.getEnumConstants()) {
            short key = id.getShort(api);
            int min;
            int max;
            if (oldest != null) {
                min = ((Number) oldest.invoke(api)).intValue();
                max = latestStable != null
                        ? ((Number) latestStable.invoke(api, false)).intValue()
                        : ((Number) latest.invoke(api)).intValue();
            } else {
                Object[] versions = (Object[]) requests[key];
                if (versions == null) continue;
                min = 0;
                while (min < versions.length && versions[min] == null) min++;
                max = versions.length - 1;
                if (min > max) continue;
            }
            // A release whose only version of an API is an unstable draft lists none of it.
            if (max < min) continue;
            out.append(key).append('\t').append(min).append('\t').append(max).append('\t')
               .append(((Enum<?>) api).name()).append('\t')
               .append(listeners(apiKeys, api));
            if (((Enum<?>) api).name().equals("PRODUCE") && produceListedFrom != null && produceListedFrom < min) {
                out.append('\t').append(produceListedFrom);
            }
            out.append('\n');
        }
        System.out.print(out);
    }

    /** Which listeners listed `api`: some of `ZBC`, or `-`. */
    private static String listeners(Class<?> apiKeys, Object api) throws Exception {
        Method forListener = null;
        Class<?> listenerType = null;
        try {
            listenerType = Class.forName("org.apache.kafka.common.message.ApiMessageType$ListenerType");
            forListener = apiKeys.getMethod("apisForListener", listenerType);
        } catch (ClassNotFoundException | NoSuchMethodException before28) {
            // A release before listener types (2.7 and older): ZooKeeper brokers only.
        }
        if (forListener == null) {
            try {
                return apiKeys.getField("isEnabled").getBoolean(api) ? "Z" : "-";
            } catch (NoSuchFieldException before27) {
                return "Z";
            }
        }
        StringBuilder listed = new StringBuilder();
        String[][] kinds = {{"ZK_BROKER", "Z"}, {"BROKER", "B"}, {"CONTROLLER", "C"}};
        for (String[] kind : kinds) {
            Object type = null;
            for (Object constant : listenerType.getEnumConstants()) {
                if (((Enum<?>) constant).name().equals(kind[0])) type = constant;
            }
            if (type != null && ((java.util.Set<?>) forListener.invoke(null, type)).contains(api)) {
                listed.append(kind[1]);
            }
        }
        return listed.length() == 0 ? "-" : listed.toString();
    }

    private static Method method(Class<?> type, String name, Class<?>... parameters) {
        try {
            return type.getMethod(name, parameters);
        } catch (NoSuchMethodException absent) {
            return null;
        }
    }
}
