// Prints, for every API version a kafka-clients release defines (unstable ones included), the
// request and response header versions Kafka uses with it: API key, version, request header
// version, response header version, tab-separated. Run by tools/import_schemas.py in Java's
// single-file source mode with kafka-clients and slf4j-api on the class path:
//
//   java -cp kafka-clients.jar:slf4j-api.jar tools/header-versions/HeaderVersions.java
//
// Facts only: numbers, no text from Kafka.

import org.apache.kafka.common.message.ApiMessageType;

public class HeaderVersions {
    public static void main(String[] args) {
        StringBuilder out = new StringBuilder();
        for (ApiMessageType api : ApiMessageType.values()) {
            for (short v = api.lowestSupportedVersion(); v <= api.highestSupportedVersion(true); v++) {
                out.append(api.apiKey()).append('\t').append(v).append('\t')
                   .append(api.requestHeaderVersion(v)).append('\t')
                   .append(api.responseHeaderVersion(v)).append('\n');
            }
        }
        System.out.print(out);
    }
}
