package kafkacodec.oracle;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Base64;

/** Record sets and batches as Kafka 4 keeps them (the pinned release). */
public final class Records4 implements RecordsSupport {
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

    // ---- record batches: MemoryRecordsBuilder writes, MemoryRecords reads ----
    //
    // Batches travel in kafka-codec's records JSON form (src/records/json.rs): header fields
    // by name, records with absolute offsets, keys/values/header values as padded base64.

    /** Writes each batch with Kafka's MemoryRecordsBuilder, as a producer (or broker) would. */
    @Override
    public byte[] build(JsonNode batches) throws IOException {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (JsonNode b : batches) {
            byte magic = (byte) b.get("magic").intValue();
            CompressionType type = CompressionType.forName(b.get("compression").textValue());
            boolean logAppend = "LogAppendTime".equals(b.get("timestampType").textValue());
            long logAppendTime = logAppend ? b.get("maxTimestamp").longValue() : RecordBatch.NO_TIMESTAMP;
            boolean control = b.get("isControl").booleanValue();
            long deleteHorizon = b.get("hasDeleteHorizon").booleanValue() ? b.get("baseTimestamp").longValue() : RecordBatch.NO_TIMESTAMP;
            MemoryRecordsBuilder builder = new MemoryRecordsBuilder(new ByteBufferOutputStream(1024), magic,
                    Compression.of(type).build(), logAppend ? TimestampType.LOG_APPEND_TIME : TimestampType.CREATE_TIME,
                    b.get("baseOffset").longValue(), logAppendTime, b.get("producerId").longValue(),
                    (short) b.get("producerEpoch").intValue(), b.get("baseSequence").intValue(),
                    b.get("isTransactional").booleanValue(), control, b.get("partitionLeaderEpoch").intValue(),
                    Integer.MAX_VALUE, deleteHorizon);
            for (JsonNode r : b.get("records")) {
                JsonNode hs = r.get("headers");
                RecordHeader[] headers = new RecordHeader[hs.size()];
                for (int i = 0; i < headers.length; i++) {
                    headers[i] = new RecordHeader(hs.get(i).get("key").textValue(), base64(hs.get(i).get("value")));
                }
                SimpleRecord record = new SimpleRecord(r.get("timestamp").longValue(), base64(r.get("key")), base64(r.get("value")), headers);
                if (control) builder.appendControlRecordWithOffset(r.get("offset").longValue(), record);
                else builder.appendWithOffset(r.get("offset").longValue(), record);
            }
            ByteBuffer built = builder.build().buffer();
            byte[] bytes = new byte[built.remaining()];
            built.get(bytes);
            out.write(bytes);
        }
        return out.toByteArray();
    }

    /** Reads every batch with MemoryRecords, checking each CRC (ensureValid). */
    @Override
    public ArrayNode read(byte[] bytes) {
        ArrayNode batches = Oracle.MAPPER.createArrayNode();
        for (RecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)).batches()) {
            batch.ensureValid();
            ObjectNode b = batches.addObject();
            b.put("baseOffset", batch.baseOffset());
            b.put("partitionLeaderEpoch", batch.partitionLeaderEpoch());
            b.put("magic", batch.magic());
            b.put("crc", batch.checksum());
            b.put("compression", batch.compressionType().name);
            b.put("timestampType", batch.timestampType() == TimestampType.LOG_APPEND_TIME ? "LogAppendTime" : "CreateTime");
            b.put("isTransactional", batch.isTransactional());
            b.put("isControl", batch.isControlBatch());
            b.put("hasDeleteHorizon", batch.deleteHorizonMs().isPresent());
            b.put("lastOffsetDelta", batch.lastOffset() - batch.baseOffset());
            if (batch instanceof org.apache.kafka.common.record.internal.DefaultRecordBatch d) {
                b.put("baseTimestamp", d.baseTimestamp());
            }
            b.put("maxTimestamp", batch.maxTimestamp());
            b.put("producerId", batch.producerId());
            b.put("producerEpoch", batch.producerEpoch());
            b.put("baseSequence", batch.baseSequence());
            ArrayNode records = b.putArray("records");
            for (Record record : batch) {
                record.ensureValid();
                ObjectNode r = records.addObject();
                r.put("offset", record.offset());
                r.put("timestamp", record.timestamp());
                r.put("key", base64(record.key()));
                r.put("value", base64(record.value()));
                ArrayNode headers = r.putArray("headers");
                for (org.apache.kafka.common.header.Header h : record.headers()) {
                    ObjectNode header = headers.addObject();
                    header.put("key", h.key());
                    header.put("value", h.value() == null ? null : Base64.getEncoder().encodeToString(h.value()));
                }
            }
        }
        return batches;
    }

    static byte[] base64(JsonNode text) {
        return text == null || text.isNull() ? null : Base64.getDecoder().decode(text.textValue());
    }

    static String base64(ByteBuffer buffer) {
        if (buffer == null) return null;
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }
}
