package kafkacodec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;

import java.io.IOException;

/**
 * What the oracle needs of Kafka's record sets. Kafka 4.0 moved them to internal packages, so
 * each build of the oracle compiles one implementation: {@code Records4} against Kafka 4 (the
 * pinned release; it also builds and reads batches), {@code Records3} against Kafka 3.9 (message
 * fields only).
 */
interface RecordsSupport {
    /** Whether a field of this type holds a record set. */
    boolean isRecords(Class<?> type);

    /** The bytes of a record set read from a message. */
    byte[] bytes(Object records);

    /** Writes each batch with Kafka's MemoryRecordsBuilder (op records_build). */
    byte[] build(JsonNode batches) throws IOException;

    /** Reads every batch with MemoryRecords, checking each CRC (op records_read). */
    ArrayNode read(byte[] bytes);

    /** The implementation this build compiled. */
    static RecordsSupport load() {
        for (String name : new String[] {"kafkacodec.oracle.Records4", "kafkacodec.oracle.Records3"}) {
            try {
                return (RecordsSupport) Class.forName(name).getConstructor().newInstance();
            } catch (ClassNotFoundException e) {
                // built for the other Kafka line
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("the oracle was built without a RecordsSupport");
    }
}
