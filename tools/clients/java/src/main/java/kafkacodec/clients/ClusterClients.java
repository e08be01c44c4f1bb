package kafkacodec.clients;

import static kafkacodec.clients.PollingMember.GUARD;
import static kafkacodec.clients.PollingMember.check;
import static kafkacodec.clients.PollingMember.waitFor;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Java kafka-clients against the in-memory cluster (cluster/tests/java.rs): the AdminClient
 * creates and describes topics; the producer sends keyed records; a classic consumer group
 * reads them and commits; two KIP-848 consumers (group.protocol=consumer) share a topic, one
 * leaves, the other takes over every partition from the committed offsets, and every record
 * is consumed exactly once; the AdminClient lists the groups with their types, describes the
 * KIP-848 group and reads its committed offsets back. Any difference from what is expected
 * exits non-zero with one line saying what.
 *
 * <p>Usage: ClusterClients BOOTSTRAP
 */
public final class ClusterClients {
    private static final int PARTITIONS = 4;
    private static final int RECORDS = 400;

    private ClusterClients() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: ClusterClients BOOTSTRAP");
            System.exit(2);
        }
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            run(admin, bootstrap);
        }
        System.out.println("java clients: every check passed");
    }

    private static void run(Admin admin, String bootstrap) throws Exception {
        admin.createTopics(List.of(
                        new NewTopic("java-classic", PARTITIONS, (short) 1),
                        new NewTopic("java-kip848", PARTITIONS, (short) 1)))
                .all()
                .get();
        Map<String, TopicDescription> described =
                admin.describeTopics(List.of("java-classic", "java-kip848")).allTopicNames().get();
        for (TopicDescription topic : described.values()) {
            check(topic.partitions().size() == PARTITIONS,
                    "describeTopics: " + topic.name() + " has " + topic.partitions().size() + " partitions");
            check(topic.partitions().stream().allMatch(p -> p.leader() != null),
                    "describeTopics: a partition of " + topic.name() + " has no leader");
        }
        System.out.println("admin: created and described " + described.keySet());

        try (KafkaProducer<String, String> producer = producer(bootstrap)) {
            produce(producer, "java-classic", 0, RECORDS);
            // The classic group's records first: the KIP-848 topic's come once both members hold
            // their partitions.
            classicGroup(bootstrap);
            kip848Group(admin, bootstrap, producer);
        }

        Map<String, GroupType> types = new TreeMap<>();
        for (GroupListing listing : admin.listGroups().all().get()) {
            types.put(listing.groupId(), listing.type().orElse(null));
        }
        check(types.get("java-classic") == GroupType.CLASSIC, "listGroups: java-classic is " + types.get("java-classic"));
        check(types.get("java-kip848") == GroupType.CONSUMER, "listGroups: java-kip848 is " + types.get("java-kip848"));
        System.out.println("admin: listGroups " + types);
    }

    private static KafkaProducer<String, String> producer(String bootstrap) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    /** Sends records first..first+count-1 (key and value "k<i>", "v<i>") and waits for each. */
    private static void produce(KafkaProducer<String, String> producer, String topic, int first, int count)
            throws Exception {
        List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> sent = new ArrayList<>();
        for (int i = first; i < first + count; i++) {
            sent.add(producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)));
        }
        producer.flush();
        for (var future : sent) {
            future.get();
        }
        System.out.println("producer: " + count + " records to " + topic);
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap, String group, String protocol,
            String clientId) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    /** A classic group of one consumer reads every record once and commits. */
    private static void classicGroup(String bootstrap) throws Exception {
        Map<String, Integer> seen = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = consumer(bootstrap, "java-classic", "classic", "classic-0")) {
            consumer.subscribe(List.of("java-classic"));
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (seen.size() < RECORDS && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    checkRecord(record);
                    seen.merge(record.key(), 1, Integer::sum);
                }
                consumer.commitSync();
            }
            check(seen.size() == RECORDS, "classic group: consumed " + seen.size() + " of " + RECORDS + " records");
            check(seen.values().stream().allMatch(n -> n == 1), "classic group: a record was consumed twice");
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(consumer.assignment());
            long total = committed.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
            check(total == RECORDS, "classic group: the commits add up to " + total + ", not " + RECORDS);
        }
        System.out.println("classic group: " + RECORDS + " records consumed once and committed");
    }

    /** One KIP-848 consumer polling on its own thread, committing after each poll. */
    private static final class Member extends PollingMember {
        final KafkaConsumer<String, String> consumer;
        final Map<String, String> consumed;
        final AtomicReference<Set<TopicPartition>> assignment = new AtomicReference<>(Set.of());
        volatile boolean stop;
        final Thread thread;

        Member(String bootstrap, String name, Map<String, String> consumed) {
            super(name);
            this.consumed = consumed;
            this.consumer = consumer(bootstrap, "java-kip848", "consumer", name);
            this.thread = new Thread(this, name);
        }

        @Override
        public void run() {
            try {
                consumer.subscribe(List.of("java-kip848"));
                while (!stop) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(100));
                    for (ConsumerRecord<String, String> record : records) {
                        checkRecord(record);
                        String before = consumed.putIfAbsent(record.key(), name + "@" + record.partition() + ":" + record.offset());
                        if (before != null) {
                            throw new IllegalStateException("KIP-848 group: " + record.key() + " consumed twice, by "
                                    + before + " and " + name + "@" + record.partition() + ":" + record.offset());
                        }
                    }
                    if (!records.isEmpty()) {
                        consumer.commitSync();
                    }
                    assignment.set(Set.copyOf(consumer.assignment()));
                }
            } catch (Throwable e) {
                failure.set(e);
            } finally {
                // Leaves the group (a heartbeat at member epoch -1).
                consumer.close();
            }
        }

        void stopAndJoin() throws InterruptedException {
            stop = true;
            thread.join(GUARD.toMillis());
            check(!thread.isAlive(), name + " did not stop");
            if (failure.get() != null) {
                throw new IllegalStateException(name + " failed", failure.get());
            }
        }
    }

    /**
     * Two KIP-848 members share the topic (disjoint, all partitions), consume the first records
     * once; one leaves, the other takes over every partition and consumes the next records from
     * the committed offsets, none lost and none twice.
     */
    private static void kip848Group(Admin admin, String bootstrap, KafkaProducer<String, String> producer)
            throws Exception {
        Map<String, String> consumed = new ConcurrentHashMap<>();
        Member a = new Member(bootstrap, "kip848-a", consumed);
        Member b = new Member(bootstrap, "kip848-b", consumed);
        a.thread.start();
        b.thread.start();
        waitFor("both KIP-848 members hold partitions, all " + PARTITIONS + " between them", () -> {
            Set<TopicPartition> x = a.assignment.get();
            Set<TopicPartition> y = b.assignment.get();
            Set<TopicPartition> all = new HashSet<>(x);
            all.addAll(y);
            return !x.isEmpty() && !y.isEmpty() && all.size() == PARTITIONS && x.size() + y.size() == PARTITIONS;
        }, a, b);
        System.out.println("KIP-848 group: a holds " + sorted(a.assignment.get()) + ", b holds " + sorted(b.assignment.get()));

        ConsumerGroupDescription group =
                admin.describeConsumerGroups(List.of("java-kip848")).all().get().get("java-kip848");
        check(group.type() == GroupType.CONSUMER, "describeConsumerGroups: type " + group.type());
        check(group.groupState() == GroupState.STABLE, "describeConsumerGroups: state " + group.groupState());
        check(group.members().size() == 2, "describeConsumerGroups: " + group.members().size() + " members");
        check("uniform".equals(group.partitionAssignor()), "describeConsumerGroups: assignor " + group.partitionAssignor());
        int described = group.members().stream().mapToInt(m -> m.assignment().topicPartitions().size()).sum();
        check(described == PARTITIONS, "describeConsumerGroups: " + described + " partitions assigned");
        System.out.println("admin: describeConsumerGroups " + group.groupState() + ", members "
                + group.members().stream().map(MemberDescription::clientId).sorted().toList());

        produce(producer, "java-kip848", 0, RECORDS);
        waitFor("the first " + RECORDS + " records consumed", () -> consumed.size() == RECORDS, a, b);
        long byA = consumed.values().stream().filter(v -> v.startsWith("kip848-a")).count();
        check(byA > 0 && byA < RECORDS, "KIP-848 group: a consumed " + byA + " of " + RECORDS);

        a.stopAndJoin();
        waitFor("b takes over every partition", () -> b.assignment.get().size() == PARTITIONS, b);
        System.out.println("KIP-848 group: a left, b holds " + sorted(b.assignment.get()));
        produce(producer, "java-kip848", RECORDS, RECORDS);
        waitFor("all " + 2 * RECORDS + " records consumed", () -> consumed.size() == 2 * RECORDS, b);
        for (int i = RECORDS; i < 2 * RECORDS; i++) {
            String by = consumed.get("k" + i);
            check(by != null && by.startsWith("kip848-b"), "KIP-848 group: k" + i + " consumed by " + by);
        }
        b.stopAndJoin();
        System.out.println("KIP-848 group: " + 2 * RECORDS + " records consumed once (" + byA + " by a before it left)");

        Map<TopicPartition, OffsetAndMetadata> offsets =
                admin.listConsumerGroupOffsets("java-kip848").partitionsToOffsetAndMetadata().get();
        long total = offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
        check(offsets.size() == PARTITIONS && total == 2 * RECORDS,
                "listConsumerGroupOffsets: " + offsets + " (sum " + total + ", not " + 2 * RECORDS + ")");
        System.out.println("admin: listConsumerGroupOffsets " + new TreeMap<>(byName(offsets)));
    }

    private static Map<String, Long> byName(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Map<String, Long> named = new HashMap<>();
        offsets.forEach((tp, om) -> named.put(tp.toString(), om.offset()));
        return named;
    }

    private static Collection<String> sorted(Set<TopicPartition> partitions) {
        Set<String> names = new TreeSet<>();
        partitions.forEach(tp -> names.add(tp.toString()));
        return names;
    }

    private static void checkRecord(ConsumerRecord<String, String> record) {
        check(record.key() != null && record.value() != null && record.value().equals("v" + record.key().substring(1)),
                "record at " + record.topic() + "-" + record.partition() + ":" + record.offset() + " is "
                        + record.key() + "=" + record.value());
    }
}
