package kafkacodec.clients;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A share group's offsets through the Java AdminClient (cluster/tests/java_share_offsets.rs;
 * by hand against a real broker): 10 records produced; alterShareGroupOffsets makes the group
 * and starts partition 0 at 3; listShareGroupOffsets reports start 3 and lag 7; a
 * KafkaShareConsumer then gets exactly records 3-9; while it is a member, altering and deleting
 * fail with GroupNotEmptyException; once it closed the lag is 0; deleteShareGroupOffsets
 * forgets the topic's share state (a second delete finds none). Prints one line per fact
 * (compared between the cluster and a broker by the test); any difference from what is
 * expected exits non-zero with one line saying what. Leaves the group empty with offsets
 * deleted, for kafka-share-groups to reset.
 *
 * <p>Usage: ClusterShareGroupOffsets BOOTSTRAP TOPIC GROUP
 */
public final class ClusterShareGroupOffsets {
    private static final int RECORDS = 10;
    private static final Duration GUARD = Duration.ofSeconds(30);

    private ClusterShareGroupOffsets() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: ClusterShareGroupOffsets BOOTSTRAP TOPIC GROUP");
            System.exit(2);
        }
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            run(admin, bootstrap, args[1], args[2]);
        }
        System.out.println("java share group offsets: every check passed");
        // The share consumer's background threads may linger.
        System.exit(0);
    }

    private static void run(Admin admin, String bootstrap, String topic, String group) throws Exception {
        TopicPartition partition = new TopicPartition(topic, 0);
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
            }
            producer.flush();
        }

        admin.alterShareGroupOffsets(group, Map.of(partition, 3L)).all().get();
        SharePartitionOffsetInfo moved = offsets(admin, group, partition);
        check(moved != null && moved.startOffset() == 3 && moved.lag().orElse(-1L) == 7,
                "after the alter: " + moved);
        System.out.println("altered: start " + moved.startOffset() + ", lag " + moved.lag().orElse(null));

        Properties consumerProps = new Properties();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        Map<String, Integer> seen = new TreeMap<>();
        try (KafkaShareConsumer<String, String> consumer =
                new KafkaShareConsumer<>(consumerProps, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(Set.of(topic));
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (seen.values().stream().mapToInt(Integer::intValue).sum() < RECORDS - 3) {
                check(System.nanoTime() < deadline, "not within " + GUARD.toSeconds() + " s: 7 records, got " + seen);
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    seen.merge(record.key(), 1, Integer::sum);
                }
            }
            Map<String, Integer> expected = new TreeMap<>();
            for (int i = 3; i < RECORDS; i++) {
                expected.put("k" + i, 1);
            }
            check(seen.equals(expected), "consumed " + seen);
            System.out.println("consumed from the altered start: " + seen.keySet());
            // Acknowledges what this poll handed out, so nothing is in flight.
            consumer.poll(Duration.ofMillis(100));
            consumer.commitSync();
            refusedNonEmpty("alter", () -> admin.alterShareGroupOffsets(group, Map.of(partition, 0L)).all().get());
            refusedNonEmpty("delete", () -> admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get());
        }

        SharePartitionOffsetInfo done = offsets(admin, group, partition);
        check(done != null && done.lag().orElse(-1L) == 0, "after consuming: " + done);
        System.out.println("consumed: lag " + done.lag().orElse(null));

        admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
        try {
            admin.deleteShareGroupOffsets(group, Set.of(topic)).all().get();
            check(false, "a second delete succeeded");
        } catch (ExecutionException e) {
            check(e.getCause() instanceof UnknownTopicOrPartitionException, "a second delete: " + e.getCause());
            System.out.println("deleted; again: " + e.getCause().getClass().getSimpleName());
        }
        SharePartitionOffsetInfo gone = offsets(admin, group, partition);
        System.out.println("after the delete: " + (gone == null ? "no offsets" : "start " + gone.startOffset()));
    }

    /** The group's offsets of {@code partition} (null when it has none). */
    private static SharePartitionOffsetInfo offsets(Admin admin, String group, TopicPartition partition)
            throws Exception {
        ListShareGroupOffsetsSpec spec = new ListShareGroupOffsetsSpec().topicPartitions(List.of(partition));
        Map<TopicPartition, SharePartitionOffsetInfo> all =
                admin.listShareGroupOffsets(Map.of(group, spec)).partitionsToOffsetInfo(group).get();
        return all.get(partition);
    }

    private interface Call {
        void run() throws Exception;
    }

    private static void refusedNonEmpty(String what, Call call) throws Exception {
        try {
            call.run();
            check(false, what + " succeeded while the group has a member");
        } catch (ExecutionException e) {
            check(e.getCause() instanceof GroupNotEmptyException, what + ": " + e.getCause());
            System.out.println(what + " with a member: " + e.getCause().getClass().getSimpleName());
        }
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what);
        }
    }
}
