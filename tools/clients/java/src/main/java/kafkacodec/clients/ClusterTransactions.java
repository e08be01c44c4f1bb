package kafkacodec.clients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Java kafka-clients transactions against the in-memory cluster (cluster/tests/java.rs) or a
 * real broker: a transactional producer commits one transaction and aborts another; a
 * consume-transform-produce step commits its output and its consumer's offsets together
 * (sendOffsetsToTransaction); a second producer with the same transactional.id fences the
 * first while it has a transaction open, and the first sees ProducerFencedException. A
 * read_committed consumer then sees exactly the committed records, a read_uncommitted one
 * every record written. Any difference from what is expected exits non-zero with one line
 * saying what; the last line names the transactional id and its producer id for the tools.
 *
 * <p>Usage: ClusterTransactions BOOTSTRAP
 */
public final class ClusterTransactions {
    private static final String TOPIC = "java-txn";
    private static final String IN = "java-txn-in";
    private static final String OUT = "java-txn-out";
    private static final String TXN_ID = "java-txn-a";
    private static final String CTP_GROUP = "java-txn-ctp";
    private static final int COUNT = 10;
    private static final int PER_TRANSACTION = 5;
    private static final Duration GUARD = Duration.ofSeconds(30);

    private ClusterTransactions() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: ClusterTransactions BOOTSTRAP");
            System.exit(2);
        }
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(
                            new NewTopic(TOPIC, 2, (short) 1),
                            new NewTopic(IN, 1, (short) 1),
                            new NewTopic(OUT, 1, (short) 1)))
                    .all()
                    .get();
            run(admin, bootstrap);
        }
    }

    private static void run(Admin admin, String bootstrap) throws Exception {
        List<String> committed = new ArrayList<>();
        List<String> written = new ArrayList<>();
        KafkaProducer<String, String> first = transactional(bootstrap);
        first.initTransactions();

        // One committed transaction, one aborted.
        first.beginTransaction();
        send(first, TOPIC, "c", committed, written);
        first.commitTransaction();
        first.beginTransaction();
        send(first, TOPIC, "a", null, written);
        first.abortTransaction();

        consumeTransformProduce(admin, bootstrap, first);

        // The first producer leaves a transaction open, with its records in the log; a new
        // instance with the same transactional.id fences it and commits its own.
        first.beginTransaction();
        send(first, TOPIC, "f", null, written);
        first.flush();
        try (KafkaProducer<String, String> second = transactional(bootstrap)) {
            second.initTransactions();
            second.beginTransaction();
            send(second, TOPIC, "b", committed, written);
            second.commitTransaction();
        }
        // Its commit names its old epoch: the coordinator fences it. Were it told an abortable
        // error instead, an application would abort, which must then be fenced.
        String fenced = null;
        try {
            first.commitTransaction();
        } catch (KafkaException e) {
            fenced = fencedBy(e);
            if (fenced == null) {
                try {
                    first.abortTransaction();
                } catch (KafkaException again) {
                    fenced = fencedBy(again);
                }
            }
        }
        check(fenced != null, "the fenced producer was not told ProducerFencedException");
        first.close(Duration.ZERO);

        List<String> readCommitted = readAll(bootstrap, TOPIC, "read_committed");
        List<String> readUncommitted = readAll(bootstrap, TOPIC, "read_uncommitted");
        check(readCommitted.stream().sorted().toList().equals(committed.stream().sorted().toList()),
                "read_committed saw " + readCommitted + ", not the committed " + committed);
        check(readUncommitted.containsAll(written),
                "read_uncommitted saw " + readUncommitted + ", not every record written " + written);
        long producerId = admin.describeTransactions(List.of(TXN_ID)).all().get().get(TXN_ID).producerId();
        System.out.println("java transactions: every check passed (fenced: " + fenced + "; read_committed "
                + readCommitted.size() + " of " + readUncommitted.size() + " records)");
        System.out.println("transactional id " + TXN_ID + " producer id " + producerId);
    }

    /** Consumes IN, produces each value upper-cased to OUT, and commits the offsets with it. */
    private static void consumeTransformProduce(Admin admin, String bootstrap, KafkaProducer<String, String> producer)
            throws Exception {
        try (KafkaProducer<String, String> plain = new KafkaProducer<>(producerProperties(bootstrap))) {
            for (int i = 0; i < COUNT; i++) {
                plain.send(new ProducerRecord<>(IN, "k" + i, "in" + i));
            }
            plain.flush();
        }
        Properties properties = consumerProperties(bootstrap, "read_committed");
        properties.put(ConsumerConfig.GROUP_ID_CONFIG, CTP_GROUP);
        List<String> transformed = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
            consumer.subscribe(List.of(IN));
            Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (transformed.size() < COUNT) {
                check(System.nanoTime() < deadline, "consume-transform-produce: consumed " + transformed.size());
                var records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                producer.beginTransaction();
                for (ConsumerRecord<String, String> record : records) {
                    producer.send(new ProducerRecord<>(OUT, record.key(), record.value().toUpperCase()));
                    transformed.add(record.value().toUpperCase());
                    offsets.put(new TopicPartition(record.topic(), record.partition()),
                            new OffsetAndMetadata(record.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                producer.commitTransaction();
            }
        }
        Map<TopicPartition, OffsetAndMetadata> groupOffsets =
                admin.listConsumerGroupOffsets(CTP_GROUP).partitionsToOffsetAndMetadata().get();
        OffsetAndMetadata offset = groupOffsets.get(new TopicPartition(IN, 0));
        check(offset != null && offset.offset() == COUNT,
                "consume-transform-produce: the group committed " + groupOffsets + ", not " + COUNT);
        List<String> out = readAll(bootstrap, OUT, "read_committed");
        check(out.stream().sorted().toList().equals(transformed.stream().sorted().toList()),
                "consume-transform-produce: read_committed saw " + out + ", not " + transformed);
    }

    /** Sends PER_TRANSACTION records PREFIX0.. and waits for them; `committed` and `written` collect them. */
    private static void send(KafkaProducer<String, String> producer, String topic, String prefix,
            List<String> committed, List<String> written) throws Exception {
        for (int i = 0; i < PER_TRANSACTION; i++) {
            String value = prefix + i;
            producer.send(new ProducerRecord<>(topic, value, value)).get();
            written.add(value);
            if (committed != null) {
                committed.add(value);
            }
        }
    }

    /** Every record of TOPIC's partitions from the beginning up to the end offsets at ISOLATION. */
    private static List<String> readAll(String bootstrap, String topic, String isolation) {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProperties(bootstrap, isolation))) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(info -> new TopicPartition(topic, info.partition()))
                    .toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = new TreeMap<>((x, y) -> Integer.compare(x.partition(), y.partition()));
            end.putAll(consumer.endOffsets(partitions));
            List<String> values = new ArrayList<>();
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p) < end.get(p))) {
                check(System.nanoTime() < deadline, "reading " + topic + " " + isolation + ": " + values);
                consumer.poll(Duration.ofMillis(200)).forEach(record -> values.add(record.value()));
            }
            return values;
        }
    }

    /** The ProducerFencedException in E's causes, named, or null. */
    private static String fencedBy(Throwable e) {
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof ProducerFencedException) {
                return cause.getClass().getSimpleName();
            }
        }
        System.err.println("the fenced producer failed otherwise: " + e);
        return null;
    }

    private static KafkaProducer<String, String> transactional(String bootstrap) {
        Properties properties = producerProperties(bootstrap);
        properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TXN_ID);
        return new KafkaProducer<>(properties);
    }

    private static Properties producerProperties(String bootstrap) {
        Properties properties = new Properties();
        properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return properties;
    }

    private static Properties consumerProperties(String bootstrap, String isolation) {
        Properties properties = new Properties();
        properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        return properties;
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println("java transactions: " + what);
            System.exit(1);
        }
    }
}
