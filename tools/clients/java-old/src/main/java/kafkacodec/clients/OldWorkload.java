package kafkacodec.clients;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * An old Java client's part of the proof with old protocol versions: everything goes to
 * BOOTSTRAP (the tap), and any answer that does not match what was sent ends the run with a
 * non-zero status. Uses only what kafka-clients 0.9.0.1 already had, so one build runs with
 * every release from 0.9 on (the release sets the protocol versions).
 *
 * <p>TOPIC exists (these releases have no admin client). Produces five records with each
 * codec of the old message formats (acks=all) and three with acks=0, consumes all of them in
 * a consumer group, commits and reads the committed offset back, then lists the topics and
 * the topic's partitions. The keys and values are NAME-CODEC-I and "NAME CODEC record I xxx...",
 * as tools/clients/check_tap_log.py expects them. Prints one JSON line, whose {@code observed}
 * (the records as consumed, with offsets and timestamp types, and the committed offset)
 * tools/clients/compare_old_clients.py compares between servers.
 *
 * <p>Usage: java -cp ... kafkacodec.clients.OldWorkload BOOTSTRAP TOPIC NAME
 */
public final class OldWorkload {
    /** zstd needs the v2 record batch, which these releases do not write. */
    private static final String[] CODECS = {"none", "gzip", "snappy", "lz4"};
    private static final int PER_CODEC = 5;
    private static final int ACKS_ZERO = 3;
    private static final long TIMEOUT_MS = 60_000;

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: OldWorkload BOOTSTRAP TOPIC NAME");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        String name = args[2];
        TopicPartition partition = new TopicPartition(topic, 0);

        Set<String> sent = new TreeSet<>();
        for (String codec : CODECS) {
            Properties props = producerProps(bootstrap, "all");
            props.put("compression.type", codec);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
                for (int i = 0; i < PER_CODEC; i++) {
                    String value = name + " " + codec + " record " + i + " " + "x".repeat(40 * i);
                    producer.send(new ProducerRecord<>(topic, 0, bytes(name + "-" + codec + "-" + i),
                            bytes(value))).get();
                    sent.add(value);
                }
            }
        }
        // acks=0: Produce requests the broker does not answer.
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(producerProps(bootstrap, "0"))) {
            for (int i = 0; i < ACKS_ZERO; i++) {
                String value = name + " acks=0 record " + i;
                producer.send(new ProducerRecord<byte[], byte[]>(topic, 0, null, bytes(value)));
                sent.add(value);
            }
            producer.flush();
        }

        String group = topic + "-group";
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("client.id", "kafka-codec-tap-" + name + "-consumer");
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        Set<String> got = new TreeSet<>();
        List<String> all = new ArrayList<>();
        // What compare_old_clients.py compares between servers: each record as consumed.
        List<String> consumed = new ArrayList<>();
        long committedOffset;
        int topics;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            subscribe(consumer, topic);
            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
            while (all.size() < sent.size()) {
                if (System.currentTimeMillis() > deadline) {
                    fail("group " + group + " read " + all.size() + " of " + sent.size() + " records");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(200)) {
                    String value = new String(record.value(), StandardCharsets.UTF_8);
                    all.add(value);
                    got.add(value);
                    consumed.add("[" + record.offset() + "," + json(record.key()) + ","
                            + json(record.value()) + "," + json(timestampType(record)) + "]");
                }
            }
            if (all.size() != sent.size() || !got.equals(sent)) {
                fail("group " + group + " read " + all + ", sent " + sent);
            }
            consumer.commitSync();
            OffsetAndMetadata committed = consumer.committed(partition);
            if (committed == null || committed.offset() != sent.size()) {
                fail("group " + group + " committed " + committed + ", want " + sent.size());
            }
            committedOffset = committed.offset();
            Map<String, List<PartitionInfo>> listed = consumer.listTopics();
            if (!listed.containsKey(topic)) {
                fail("listTopics does not name " + topic + ": " + listed.keySet());
            }
            List<PartitionInfo> partitions = consumer.partitionsFor(topic);
            if (partitions.size() != 1) {
                fail("partitionsFor: " + partitions);
            }
            topics = listed.size();
        }
        System.out.printf("{\"client\":\"%s\",\"topic\":\"%s\",\"records\":%d,\"group\":\"%s\",\"topicsListed\":%d,"
                + "\"observed\":{\"consumed\":[%s],\"committed\":%d}}%n",
                name, topic, sent.size(), group, topics, String.join(",", consumed), committedOffset);
    }

    /**
     * KafkaConsumer.subscribe took a List in 0.9 and takes a Collection since 0.10: the two
     * are different methods to the JVM, so the one this release has is looked up.
     */
    private static void subscribe(KafkaConsumer<?, ?> consumer, String topic) throws Exception {
        Method method;
        try {
            method = KafkaConsumer.class.getMethod("subscribe", Collection.class);
        } catch (NoSuchMethodException e) {
            method = KafkaConsumer.class.getMethod("subscribe", List.class);
        }
        method.invoke(consumer, Collections.singletonList(topic));
    }

    /**
     * The record's timestamp type (CreateTime: set by the producer, whose clock differs
     * between runs, so the type is compared and not the time); 0.9 records have none.
     */
    private static String timestampType(ConsumerRecord<?, ?> record) {
        try {
            return String.valueOf(ConsumerRecord.class.getMethod("timestampType").invoke(record));
        } catch (ReflectiveOperationException e) {
            return null;
        }
    }

    /** A JSON string of these ASCII keys and values, or null. */
    private static String json(Object text) {
        if (text == null) return "null";
        String value = text instanceof byte[] ? new String((byte[]) text, StandardCharsets.UTF_8) : text.toString();
        return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    private static Properties producerProps(String bootstrap, String acks) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("acks", acks);
        props.put("client.id", "kafka-codec-tap-old-producer");
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        return props;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static void fail(String message) {
        System.err.println("old java client: " + message);
        System.exit(1);
    }

    private OldWorkload() {}
}
