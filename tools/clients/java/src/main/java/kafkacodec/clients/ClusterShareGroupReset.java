package kafkacodec.clients;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A share group's {@code share.auto.offset.reset=earliest} set with the AdminClient
 * (incrementalAlterConfigs of the GROUP resource) before the group exists: a
 * KafkaShareConsumer of that group then gets every record produced before it subscribed,
 * each once (with Kafka's default, latest, it would get none of them). Exits non-zero with
 * one line saying what differs. Run by cluster/tests/share_group_configs.rs against the
 * cluster; by hand against a real broker.
 *
 * <p>Usage: ClusterShareGroupReset BOOTSTRAP TOPIC GROUP
 */
public final class ClusterShareGroupReset {
    private static final int RECORDS = 20;
    private static final Duration GUARD = Duration.ofSeconds(25);

    private ClusterShareGroupReset() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: ClusterShareGroupReset BOOTSTRAP TOPIC GROUP");
            System.exit(2);
        }
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            Collection<AlterConfigOp> ops = List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops))
                .all().get();
        }
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
        Properties consumerProps = new Properties();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        consumerProps.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        Map<String, Integer> seen = new TreeMap<>();
        try (KafkaShareConsumer<String, String> consumer =
                new KafkaShareConsumer<>(consumerProps, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(Set.of(topic));
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (seen.size() < RECORDS) {
                if (System.nanoTime() >= deadline) {
                    System.err.println("not within " + GUARD.toSeconds() + " s: " + RECORDS + " records, got " + seen);
                    System.exit(1);
                }
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    seen.merge(record.key(), 1, Integer::sum);
                }
            }
            consumer.commitSync();
        }
        if (seen.values().stream().anyMatch(count -> count != 1)) {
            System.err.println("a record consumed more than once: " + seen);
            System.exit(1);
        }
        System.out.println("java share group reset earliest: the " + RECORDS
            + " records produced before the consumer subscribed, each once");
        // The share consumer's background threads may linger.
        System.exit(0);
    }
}
