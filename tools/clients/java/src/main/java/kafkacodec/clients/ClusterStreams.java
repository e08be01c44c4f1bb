package kafkacodec.clients;

import static kafkacodec.clients.PollingMember.check;
import static kafkacodec.clients.PollingMember.waitFor;

import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Two instances of one Kafka Streams 4.4 application with {@code group.protocol=streams}
 * (KIP-1071; cluster/tests/java.rs, or by hand against a real broker): a count by key from a
 * 4-partition input topic to an output topic. Records in, both instances running with the
 * tasks split between them, the expected counts out; then one instance closes (leaving the
 * group), the other takes over all its tasks, and the next records are counted on from the
 * committed state. The AdminClient lists the group as a streams group. Any difference exits
 * non-zero with one line saying what; the last line is a summary the test compares.
 *
 * <p>Usage: ClusterStreams BOOTSTRAP [APPLICATION_ID]
 */
public final class ClusterStreams {
    /** The topics, named after the application (so that runs against one broker differ). */
    private static String INPUT;
    private static String OUTPUT;
    private static final int PARTITIONS = 4;
    private static final int KEYS = 8;
    private static final int PER_KEY = 5;
    private static final Duration GUARD = Duration.ofSeconds(90);

    private ClusterStreams() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: ClusterStreams BOOTSTRAP [APPLICATION_ID]");
            System.exit(2);
        }
        String bootstrap = args[0];
        String app = args.length > 1 ? args[1] : "java-streams-app";
        INPUT = app + "-input";
        OUTPUT = app + "-counts";
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(
                    new NewTopic(INPUT, PARTITIONS, (short) 1),
                    new NewTopic(OUTPUT, PARTITIONS, (short) 1))).all().get();
            run(admin, bootstrap, app);
        } catch (Exception e) {
            // The Streams threads would keep the JVM up: exit at once with what failed.
            e.printStackTrace();
            System.exit(1);
        }
        System.out.println("java streams: every check passed");
        System.exit(0);
    }

    private static KafkaStreams instance(String bootstrap, String app, String name) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.CLIENT_ID_CONFIG, app + "-" + name);
        props.put(StreamsConfig.STATE_DIR_CONFIG, Files.createTempDirectory("streams-" + name).toString());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(INPUT, Consumed.with(Serdes.String(), Serdes.String()))
                .groupByKey()
                .count()
                .toStream()
                .to(OUTPUT, Produced.with(Serdes.String(), Serdes.Long()));
        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        AtomicBoolean failed = new AtomicBoolean();
        streams.setUncaughtExceptionHandler(e -> {
            System.err.println(name + " failed: " + e);
            failed.set(true);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler
                    .StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        return streams;
    }

    /** Active tasks the instance runs now. */
    private static int activeTasks(KafkaStreams streams) {
        int tasks = 0;
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            tasks += thread.activeTasks().size();
        }
        return tasks;
    }

    private static void produce(String bootstrap, int round) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < KEYS * PER_KEY; i++) {
                producer.send(new ProducerRecord<>(INPUT, "key-" + (i % KEYS), "r" + round + "-" + i));
            }
            producer.flush();
        }
    }

    /** Reads the output until every key's latest count is `expected`. */
    private static void awaitCounts(KafkaConsumer<String, Long> output, Map<String, Long> latest,
            long expected, KafkaStreams... running) throws Exception {
        long deadline = System.nanoTime() + GUARD.toNanos();
        while (true) {
            for (ConsumerRecord<String, Long> record : output.poll(Duration.ofMillis(100))) {
                latest.put(record.key(), record.value());
            }
            boolean done = latest.size() == KEYS && latest.values().stream().allMatch(v -> v == expected);
            if (done) {
                return;
            }
            for (KafkaStreams streams : running) {
                check(streams.state() != KafkaStreams.State.ERROR
                        && streams.state() != KafkaStreams.State.NOT_RUNNING, "an instance stopped: " + streams.state());
            }
            check(System.nanoTime() < deadline, "counts not " + expected + " within " + GUARD.toSeconds()
                    + " s: " + new TreeMap<>(latest));
        }
    }

    private static void run(Admin admin, String bootstrap, String app) throws Exception {
        KafkaStreams first = instance(bootstrap, app, "a");
        KafkaStreams second = instance(bootstrap, app, "b");
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, app + "-reader");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, LongDeserializer.class);
        Map<String, Long> latest = new ConcurrentHashMap<>();
        try (KafkaConsumer<String, Long> output = new KafkaConsumer<>(props)) {
            output.subscribe(List.of(OUTPUT));
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (!(first.state() == KafkaStreams.State.RUNNING && second.state() == KafkaStreams.State.RUNNING
                    && activeTasks(first) + activeTasks(second) == PARTITIONS
                    && activeTasks(first) > 0 && activeTasks(second) > 0)) {
                check(System.nanoTime() < deadline, "both instances not running with the "
                        + PARTITIONS + " tasks split within " + GUARD.toSeconds() + " s: "
                        + first.state() + "/" + activeTasks(first) + " " + second.state() + "/" + activeTasks(second));
                output.poll(Duration.ofMillis(100));
            }
            int splitA = activeTasks(first);
            int splitB = activeTasks(second);
            produce(bootstrap, 1);
            awaitCounts(output, latest, PER_KEY, first, second);
            boolean listed = false;
            for (GroupListing group : admin.listGroups().all().get()) {
                if (group.groupId().equals(app)) {
                    check(group.type().equals(java.util.Optional.of(GroupType.STREAMS)),
                            "group " + app + " listed as " + group.type());
                    listed = true;
                }
            }
            check(listed, "group " + app + " not listed");

            // One instance leaves the group; the other takes over all its tasks.
            first.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                    .withTimeout(Duration.ofSeconds(30)));
            deadline = System.nanoTime() + GUARD.toNanos();
            while (!(second.state() == KafkaStreams.State.RUNNING && activeTasks(second) == PARTITIONS)) {
                check(System.nanoTime() < deadline, "the second instance did not take over all "
                        + PARTITIONS + " tasks within " + GUARD.toSeconds() + " s: " + second.state() + "/"
                        + activeTasks(second));
                output.poll(Duration.ofMillis(100));
            }
            produce(bootstrap, 2);
            awaitCounts(output, latest, 2L * PER_KEY, second);
            second.close(Duration.ofSeconds(30));
            System.out.println("summary: split " + Math.min(splitA, splitB) + "+" + Math.max(splitA, splitB)
                    + ", counts " + new TreeMap<>(latest) + ", after close " + PARTITIONS + " tasks on one");
        }
    }
}
