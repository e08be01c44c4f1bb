package kafkacodec.clients;

import static kafkacodec.clients.PollingMember.check;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InvalidRegularExpression;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * KIP-848 consumers (group.protocol=consumer) subscribing by pattern (cluster/tests/java.rs;
 * the same program against a real Kafka 4.4 broker): one with a {@code SubscriptionPattern}
 * (RE2J, resolved by the group coordinator), one with a {@code java.util.regex.Pattern}
 * (resolved by the client from metadata), each in a group of its own. PREFIX.a exists before
 * they subscribe; PREFIX.b is created after they consumed PREFIX.a's records, and PREFIX-x,
 * which neither pattern matches, too. Every record of PREFIX.a and PREFIX.b is consumed
 * exactly once by each consumer and none of PREFIX-x; ConsumerGroupDescribe shows both topics
 * assigned to the SubscriptionPattern consumer. A SubscriptionPattern RE2J refuses fails the poll with Kafka's
 * InvalidRegularExpression message. Any difference exits non-zero with one line saying what.
 *
 * <p>Usage: ClusterRegexConsumers BOOTSTRAP PREFIX
 */
public final class ClusterRegexConsumers {
    private static final int RECORDS = 50;
    /** A hang guard, not a measurement: a real broker resolves a regex after a heartbeat (5 s). */
    private static final long GUARD_NANOS = TimeUnit.SECONDS.toNanos(60);

    private ClusterRegexConsumers() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClusterRegexConsumers BOOTSTRAP PREFIX");
            System.exit(2);
        }
        String bootstrap = args[0];
        String prefix = args[1];
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            run(admin, bootstrap, prefix);
        }
        System.out.println("java regex consumers: every check passed");
        System.exit(0);
    }

    private static KafkaConsumer<String, String> consumer(String bootstrap, String group) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // The client-side Pattern is matched against metadata this fresh.
        props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private static void produce(String bootstrap, String topic) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, topic + "-" + i, topic + "-" + i)).get();
            }
        }
    }

    /** Polls both consumers until each has `want` records; every value counted per consumer. */
    private static void pollUntil(List<KafkaConsumer<String, String>> consumers, List<Map<String, Integer>> seen,
            int want, String what) {
        long deadline = System.nanoTime() + GUARD_NANOS;
        while (true) {
            boolean done = true;
            for (int i = 0; i < consumers.size(); i++) {
                for (ConsumerRecord<String, String> record : consumers.get(i).poll(Duration.ofMillis(100))) {
                    seen.get(i).merge(record.value(), 1, Integer::sum);
                }
                done &= seen.get(i).size() >= want;
            }
            if (done) {
                return;
            }
            check(System.nanoTime() < deadline, "not within 60 s: " + what + " (seen " + sizes(seen) + ")");
        }
    }

    private static List<Integer> sizes(List<Map<String, Integer>> seen) {
        List<Integer> sizes = new ArrayList<>();
        seen.forEach(s -> sizes.add(s.size()));
        return sizes;
    }

    private static void run(Admin admin, String bootstrap, String prefix) throws Exception {
        String a = prefix + ".a";
        String b = prefix + ".b";
        String other = prefix + "-x";
        admin.createTopics(List.of(new NewTopic(a, 2, (short) 1))).all().get();
        produce(bootstrap, a);
        String re2jGroup = prefix + "-re2j";
        String javaGroup = prefix + "-java";
        // Quoted as Java quotes (\Q...\E), which RE2J reads alike.
        String regex = Pattern.quote(prefix) + "\\..*";
        KafkaConsumer<String, String> re2j = consumer(bootstrap, re2jGroup);
        KafkaConsumer<String, String> java = consumer(bootstrap, javaGroup);
        List<KafkaConsumer<String, String>> both = List.of(re2j, java);
        List<Map<String, Integer>> seen = List.of(new HashMap<>(), new HashMap<>());
        try {
            re2j.subscribe(new SubscriptionPattern(regex));
            java.subscribe(Pattern.compile(regex));
            pollUntil(both, seen, RECORDS, a + "'s records");
            admin.createTopics(List.of(new NewTopic(b, 1, (short) 1), new NewTopic(other, 1, (short) 1)))
                    .all().get();
            produce(bootstrap, b);
            produce(bootstrap, other);
            pollUntil(both, seen, 2 * RECORDS, b + "'s records, created after the subscribe");
            // A little longer: nothing more may come (PREFIX-x, or a record twice).
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < until) {
                for (int i = 0; i < both.size(); i++) {
                    for (ConsumerRecord<String, String> record : both.get(i).poll(Duration.ofMillis(100))) {
                        seen.get(i).merge(record.value(), 1, Integer::sum);
                    }
                }
            }
            for (int i = 0; i < both.size(); i++) {
                String who = i == 0 ? "the SubscriptionPattern consumer" : "the Pattern consumer";
                check(seen.get(i).size() == 2 * RECORDS, who + " consumed " + seen.get(i).size() + " records");
                check(seen.get(i).values().stream().allMatch(n -> n == 1), who + " consumed a record twice");
                check(seen.get(i).keySet().stream().noneMatch(v -> v.startsWith(other)),
                        who + " consumed " + other);
            }
            ConsumerGroupDescription described =
                    admin.describeConsumerGroups(List.of(re2jGroup)).all().get().get(re2jGroup);
            check(described.members().size() == 1, "one member: " + described);
            var member = described.members().iterator().next();
            var topics = new java.util.TreeSet<String>();
            member.assignment().topicPartitions().forEach(tp -> topics.add(tp.topic()));
            check(topics.equals(new java.util.TreeSet<>(List.of(a, b))), "assigned topics: " + topics);
        } finally {
            re2j.close();
            java.close();
        }
        // A pattern RE2J refuses: the poll fails with Kafka's message.
        try (KafkaConsumer<String, String> bad = consumer(bootstrap, prefix + "-bad")) {
            bad.subscribe(new SubscriptionPattern("(a"));
            long deadline = System.nanoTime() + GUARD_NANOS;
            String message = null;
            while (message == null) {
                try {
                    bad.poll(Duration.ofMillis(100));
                } catch (InvalidRegularExpression e) {
                    message = e.getMessage();
                }
                check(System.nanoTime() < deadline, "no InvalidRegularExpression within 60 s");
            }
            check(message.equals("Invalid RE2J SubscriptionPattern provided in the call to subscribe. "
                    + "SubscribedTopicRegex `(a` is not a valid regular expression: missing closing )."),
                    "InvalidRegularExpression: " + message);
        }
    }
}
