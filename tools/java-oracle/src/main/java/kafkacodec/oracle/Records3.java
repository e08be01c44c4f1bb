package kafkacodec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.MemoryRecords;

import java.nio.ByteBuffer;

/** Record sets as Kafka 3.9 keeps them: message fields only (batches are Kafka 4's job). */
public final class Records3 implements RecordsSupport {
    @Override
    public boolean isRecords(Class<?> type) {
        return BaseRecords.class.isAssignableFrom(type);
    }

    @Override
    public byte[] bytes(Object records) {
        if (!(records instanceof MemoryRecords mr)) {
            throw new IllegalStateException("cannot take bytes from " + records.getClass().getName());
        }
        ByteBuffer b = mr.buffer(); // a duplicate: reading it does not disturb the message
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    @Override
    public byte[] build(JsonNode batches) {
        throw new Oracle.BadRequest("record batches are built by the Kafka 4 oracle only");
    }

    @Override
    public ArrayNode read(byte[] bytes) {
        throw new Oracle.BadRequest("record batches are read by the Kafka 4 oracle only");
    }
}
