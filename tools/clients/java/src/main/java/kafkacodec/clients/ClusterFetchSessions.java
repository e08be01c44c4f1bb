package kafkacodec.clients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Fetch sessions (KIP-227) with the Java consumer, which opens one per broker with its first
 * full fetch and then fetches incrementally (cluster/tests/java.rs reads the cluster's
 * request log to see that it did). A consumer is assigned every partition of a topic and
 * keeps polling while the producer sends records in rounds, one partition at a time, so
 * that each incremental fetch has news on some partitions only; every record must arrive
 * exactly once, in order within its partition. Any difference exits non-zero with one line
 * saying what.
 *
 * <p>Usage: ClusterFetchSessions BOOTSTRAP TOPIC
 */
public final class ClusterFetchSessions {
    private static final int PARTITIONS = 6;
    private static final int ROUNDS = 12;
    private static final int PER_ROUND = 25;
    private static final Duration GUARD = Duration.ofSeconds(40);

    private ClusterFetchSessions() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClusterFetchSessions BOOTSTRAP TOPIC");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        Properties admin = new Properties();
        admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin client = Admin.create(admin)) {
            client.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get();
        }

        Properties producerConfig = new Properties();
        producerConfig.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        producerConfig.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        Properties consumerConfig = new Properties();
        consumerConfig.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerConfig.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerConfig.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        List<TopicPartition> partitions = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            partitions.add(new TopicPartition(topic, p));
        }
        Set<String> seen = new HashSet<>();
        long[] next = new long[PARTITIONS];
        int expected = 0;
        try (KafkaProducer<String, String> producer =
                        new KafkaProducer<>(producerConfig, new StringSerializer(), new StringSerializer());
                KafkaConsumer<String, String> consumer =
                        new KafkaConsumer<>(consumerConfig, new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(partitions);
            for (int round = 0; round < ROUNDS; round++) {
                // One partition per round, so the others have no news.
                int partition = round % PARTITIONS;
                for (int i = 0; i < PER_ROUND; i++) {
                    String value = "r" + round + "-" + i;
                    producer.send(new ProducerRecord<>(topic, partition, null, value)).get();
                }
                expected += PER_ROUND;
                long deadline = System.nanoTime() + GUARD.toNanos();
                while (seen.size() < expected) {
                    if (System.nanoTime() > deadline) {
                        fail("round " + round + ": " + seen.size() + " of " + expected + " records arrived");
                    }
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                        int p = record.partition();
                        if (record.offset() != next[p]) {
                            fail("partition " + p + ": offset " + record.offset() + ", expected " + next[p]);
                        }
                        next[p]++;
                        if (!seen.add(record.value())) {
                            fail("record " + record.value() + " arrived twice");
                        }
                    }
                }
            }
            // A few more polls with nothing new: no record may arrive again.
            for (int i = 0; i < 3; i++) {
                if (!consumer.poll(Duration.ofMillis(200)).isEmpty()) {
                    fail("records arrived after all " + expected + " had");
                }
            }
        }
        System.out.println("fetch sessions: " + seen.size() + " records, each once");
    }

    private static void fail(String why) {
        System.err.println("ClusterFetchSessions: " + why);
        System.exit(1);
    }
}
