package kafkacodec.clients;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client's part of the policy proof (tools/clients/tap-deny-proof.sh), through a tap
 * run with {@code --deny-topic 'PREFIX-denied*'}: creates PREFIX-jallowed and PREFIX-jdenied
 * directly at the broker; one producer (linger, so that both topics share Produce requests,
 * which the tap splits) sends N records to each through the tap: every record to the allowed
 * topic is acknowledged, every one to the denied topic fails with TopicAuthorizationException;
 * a consumer assigned both sees TopicAuthorizationException, then, assigned the allowed
 * topic only, reads its N records; asked directly, the broker holds no record of the denied
 * topic. Any other outcome ends the run non-zero.
 *
 * <p>Usage: java -cp ... kafkacodec.clients.DenyProof TAP BROKER PREFIX
 */
public final class DenyProof {
    private static final int N = 20;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: DenyProof TAP BROKER PREFIX");
            System.exit(2);
        }
        String tap = args[0];
        String broker = args[1];
        String allowed = args[2] + "-jallowed";
        String denied = args[2] + "-jdenied";
        Properties direct = new Properties();
        direct.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker);
        try (Admin admin = Admin.create(direct)) {
            admin.createTopics(List.of(new NewTopic(allowed, 1, (short) 1),
                    new NewTopic(denied, 1, (short) 1))).all().get();
        }

        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, tap);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.LINGER_MS_CONFIG, 200);
        // Not idempotent: an authorization error on one partition is then that batch's
        // failure only.
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        List<Future<RecordMetadata>> toAllowed = new ArrayList<>();
        List<Future<RecordMetadata>> toDenied = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps)) {
            // Metadata for both first, so that their first batches can share a request.
            producer.partitionsFor(allowed);
            producer.partitionsFor(denied);
            for (int i = 0; i < N; i++) {
                toAllowed.add(producer.send(new ProducerRecord<>(allowed, 0, null, bytes("v" + i))));
                toDenied.add(producer.send(new ProducerRecord<>(denied, 0, null, bytes("v" + i))));
            }
            producer.flush();
        }
        for (Future<RecordMetadata> sent : toAllowed) {
            sent.get();
        }
        for (Future<RecordMetadata> sent : toDenied) {
            try {
                sent.get();
                fail("a record to " + denied + " was acknowledged");
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof TopicAuthorizationException)) {
                    fail("a record to " + denied + " failed with " + e.getCause() + ", want "
                            + "TopicAuthorizationException");
                }
            }
        }

        Properties consumerProps = new Properties();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, tap);
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        boolean refused = false;
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps)) {
            TopicPartition good = new TopicPartition(allowed, 0);
            TopicPartition bad = new TopicPartition(denied, 0);
            consumer.assign(List.of(good, bad));
            consumer.seek(good, 0);
            consumer.seek(bad, 0);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!refused && System.nanoTime() < deadline) {
                try {
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofSeconds(1))) {
                        values.add(new String(record.value(), StandardCharsets.UTF_8));
                    }
                } catch (TopicAuthorizationException e) {
                    refused = e.unauthorizedTopics().contains(denied);
                }
            }
            if (!refused) {
                fail("consuming " + denied + " raised no TopicAuthorizationException");
            }
            consumer.assign(List.of(good));
            while (values.size() < N && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofSeconds(1))) {
                    values.add(new String(record.value(), StandardCharsets.UTF_8));
                }
            }
        }
        try (Admin admin = Admin.create(direct)) {
            long end = admin.listOffsets(Map.of(new TopicPartition(denied, 0), OffsetSpec.latest()))
                    .all().get().get(new TopicPartition(denied, 0)).offset();
            if (end != 0) {
                fail(denied + " holds " + end + " records at the broker: the tap let some through");
            }
        }
        List<String> want = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            want.add("v" + i);
        }
        if (!values.containsAll(want)) {
            fail(allowed + " read back " + values);
        }
        System.out.println("{\"client\": \"java\", \"delivered\": " + toAllowed.size()
                + ", \"denied\": " + toDenied.size() + ", \"consumed\": " + values.size() + "}");
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static void fail(String why) {
        System.err.println("DenyProof: " + why);
        System.exit(1);
    }
}
