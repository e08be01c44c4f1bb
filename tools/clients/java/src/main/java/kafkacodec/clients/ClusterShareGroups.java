package kafkacodec.clients;

import static kafkacodec.clients.PollingMember.GUARD;
import static kafkacodec.clients.PollingMember.check;
import static kafkacodec.clients.PollingMember.waitFor;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Two KafkaShareConsumers of one share group share a one-partition topic
 * (cluster/tests/java.rs; by hand against a real broker): the AdminClient describes the group
 * (both members assigned the partition) and lists it as a share group; the share partition
 * starts at the log end (share.auto.offset.reset=latest), so warm-up records are produced
 * until one is consumed; then 400 records, each consumed exactly once by one of the two
 * (implicit acknowledgement). Any difference exits non-zero with one line saying what.
 *
 * <p>Usage: ClusterShareGroups BOOTSTRAP
 */
public final class ClusterShareGroups {
    private static final String TOPIC = "java-share";
    private static final String GROUP = "java-share-group";
    private static final int RECORDS = 400;

    private ClusterShareGroups() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: ClusterShareGroups BOOTSTRAP");
            System.exit(2);
        }
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            run(admin, bootstrap);
        }
        System.out.println("java share consumers: every check passed");
        // The share consumers' background threads may linger.
        System.exit(0);
    }

    /** One share consumer polling on its own thread, keeping every record it is handed. */
    private static final class Member extends PollingMember {
        final KafkaShareConsumer<String, String> consumer;
        final Map<String, Integer> seen = new ConcurrentHashMap<>();
        final AtomicInteger counted = new AtomicInteger();
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread;

        Member(String bootstrap, String name) {
            super(name);
            Properties props = new Properties();
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
            consumer = new KafkaShareConsumer<>(props, new StringDeserializer(), new StringDeserializer());
            consumer.subscribe(Set.of(TOPIC));
            thread = new Thread(this, name);
            thread.start();
        }

        @Override
        public void run() {
            try {
                while (!stop.get()) {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                        String key = record.key();
                        if (key.startsWith("k")) {
                            check(record.value().equals("v" + key.substring(1)),
                                    name + ": record " + key + " is " + record.value());
                            counted.incrementAndGet();
                        }
                        seen.merge(key, 1, Integer::sum);
                    }
                }
            } catch (Throwable e) {
                failure.set(e);
            } finally {
                consumer.close();
            }
        }
    }

    private static void run(Admin admin, String bootstrap) throws Exception {
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        Member a = new Member(bootstrap, "share-a");
        Member b = new Member(bootstrap, "share-b");
        waitFor("both members assigned the partition", () -> {
            try {
                ShareGroupDescription group =
                        admin.describeShareGroups(List.of(GROUP)).describedGroups().get(GROUP).get();
                return group.members().size() == 2
                        && group.members().stream().allMatch(m -> m.assignment().topicPartitions().size() == 1);
            } catch (Exception e) {
                return false;
            }
        }, a, b);
        ShareGroupDescription group = admin.describeShareGroups(List.of(GROUP)).describedGroups().get(GROUP).get();
        check(group.groupState() == GroupState.STABLE, "describeShareGroups: state " + group.groupState());
        for (ShareMemberDescription member : group.members()) {
            System.out.println("admin: member " + member.clientId() + " assigned " + member.assignment().topicPartitions());
        }
        Map<String, GroupType> types = new TreeMap<>();
        for (GroupListing listing : admin.listGroups().all().get()) {
            types.put(listing.groupId(), listing.type().orElse(null));
        }
        check(types.get(GROUP) == GroupType.SHARE, "listGroups: " + GROUP + " is " + types.get(GROUP));

        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(props, new StringSerializer(), new StringSerializer())) {
            // The share partition starts at the log end when first fetched: a warm-up record
            // every 200 ms until one is consumed shows it has started.
            AtomicInteger warmups = new AtomicInteger();
            waitFor("a warm-up record consumed", () -> {
                if (!a.seen.isEmpty() || !b.seen.isEmpty()) {
                    return true;
                }
                producer.send(new ProducerRecord<>(TOPIC, "warmup-" + warmups.getAndIncrement(), "w"));
                producer.flush();
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return false;
            }, a, b);
            // In batches of 10, so that the two members' fetches take turns.
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(TOPIC, "k" + i, "v" + i));
                if (i % 10 == 9) {
                    producer.flush();
                }
            }
            producer.flush();
        }
        System.out.println("producer: " + RECORDS + " records to " + TOPIC);
        waitFor(RECORDS + " records consumed", () -> a.counted.get() + b.counted.get() >= RECORDS, a, b);
        // Anything handed out twice would come within a few polls more.
        Thread.sleep(500);
        a.stop.set(true);
        b.stop.set(true);
        a.thread.join(GUARD.toMillis());
        b.thread.join(GUARD.toMillis());
        for (Member member : List.of(a, b)) {
            if (member.failure.get() != null) {
                throw new IllegalStateException(member.name + " failed", member.failure.get());
            }
        }
        for (int i = 0; i < RECORDS; i++) {
            String key = "k" + i;
            int times = a.seen.getOrDefault(key, 0) + b.seen.getOrDefault(key, 0);
            check(times == 1, "record " + key + " consumed " + times + " times");
        }
        System.out.println("share consumers: " + RECORDS + " records, each once: " + a.name + " " + a.counted.get()
                + ", " + b.name + " " + b.counted.get());
    }
}
