package kafkacodec.clients;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Java kafka-clients meeting faults the in-memory cluster makes on cue, driven through its
 * HTTP control surface (cluster/tests/java.rs):
 *
 * <ol>
 *   <li>a leader moved mid-produce: the idempotent producer meets NOT_LEADER_OR_FOLLOWER at
 *       the old leader, learns the new one (from the refusal, Produce v10+, or a metadata
 *       refresh), sends the rest to it, and every
 *       record is acknowledged once, at offsets 0..n-1;
 *   <li>a produce applied and its answer lost ({"applyThen": "disconnect"}): the idempotent
 *       producer retries it on a new connection and the cluster answers the retry with the
 *       original offsets (each record once); the same without idempotence leaves each
 *       record twice.
 * </ol>
 *
 * Checked from both sides: the acknowledged offsets, the partition's end offset, and the
 * cluster's request log. Any difference exits non-zero with one line saying what.
 *
 * <p>Usage: ClusterFaults BOOTSTRAP CONTROL_HOST:PORT
 */
public final class ClusterFaults extends FaultProof {
    private static final int RECORDS = 1000;
    private static final int RETRIED = 20;
    private static final Pattern BROKER = Pattern.compile("\"broker\":(\\d+)");
    private static final Pattern VERSION = Pattern.compile("\"version\":(\\d+)");

    private ClusterFaults(String bootstrap, String control) {
        super(bootstrap, control);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClusterFaults BOOTSTRAP CONTROL_HOST:PORT");
            System.exit(2);
        }
        ClusterFaults faults = new ClusterFaults(args[0], args[1]);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]))) {
            admin.createTopics(List.of(
                            new NewTopic("java-faults", 1, (short) 1),
                            new NewTopic("java-retry", 1, (short) 1),
                            new NewTopic("java-retry-plain", 1, (short) 1)))
                    .all()
                    .get();
        }
        String moved = faults.leaderMovedMidProduce();
        String idempotent = faults.lostAnswer("java-retry", true);
        String plain = faults.lostAnswer("java-retry-plain", false);
        System.out.println("java clients: " + moved + "; " + idempotent + "; " + plain);
    }

    /** The leader of java-faults moves from broker 0 to 1 while the producer sends. */
    private String leaderMovedMidProduce() throws Exception {
        Queue<Long> acked = new ConcurrentLinkedQueue<>();
        Queue<Exception> failed = new ConcurrentLinkedQueue<>();
        long before;
        try (KafkaProducer<String, String> producer = producer("java-faults", true)) {
            send(producer, "java-faults", 0, RECORDS / 2, acked, failed);
            waitFor(() -> acked.size() >= RECORDS / 4 || !failed.isEmpty(), "acks before the move");
            before = lastSequence();
            String answer = call("POST", "/leaders",
                    "{\"topic\": \"java-faults\", \"partition\": 0, \"leader\": 1}");
            check(answer.contains("\"leaderEpoch\":1"), "the move answered " + answer);
            send(producer, "java-faults", RECORDS / 2, RECORDS, acked, failed);
            producer.flush();
        }
        check(failed.isEmpty(), "a send failed after the move: " + failed.peek());
        checkOffsets(acked, 0, RECORDS, "java-faults");
        check(endOffset("java-faults") == RECORDS, "java-faults does not end at " + RECORDS);
        List<Integer> brokers = new ArrayList<>();
        String produced = call("GET", "/log?api=Produce&after=" + before, null);
        Matcher matcher = BROKER.matcher(produced);
        while (matcher.find()) {
            brokers.add(Integer.parseInt(matcher.group(1)));
        }
        int toOld = Collections.frequency(brokers, 0);
        int toNew = Collections.frequency(brokers, 1);
        check(toOld > 0, "no produce request met the old leader after the move: the fault never fired");
        check(toNew > 0, "no produce request reached the new leader after the move");
        check(brokers.lastIndexOf(0) < brokers.indexOf(1), "the producer went back to the old leader");
        // Produce v10+ names the new leader in the old leader's refusal (KIP-951): the producer
        // may follow that without asking for Metadata. Before v10 only a refresh finds it.
        boolean refreshed = SEQUENCE.matcher(call("GET", "/log?api=Metadata&after=" + before, null)).find();
        int oldestVersion = Integer.MAX_VALUE;
        Matcher version = VERSION.matcher(produced);
        while (version.find()) {
            oldestVersion = Math.min(oldestVersion, Integer.parseInt(version.group(1)));
        }
        check(refreshed || oldestVersion >= 10, "the producer did not refresh its metadata after the move");
        return "a leader moved mid-produce (" + toOld + " produce request(s) to the old leader after the move, "
                + toNew + " to the new one, found by " + (refreshed ? "a Metadata refresh" : "the refusal's leader")
                + "), " + RECORDS + " records acknowledged once at 0.." + (RECORDS - 1);
    }

    /** The first Produce of `client` is applied and its answer lost; the producer retries. */
    private String lostAnswer(String topic, boolean idempotent) throws Exception {
        Queue<Long> acked = new ConcurrentLinkedQueue<>();
        Queue<Exception> failed = new ConcurrentLinkedQueue<>();
        long before;
        String rule;
        try (KafkaProducer<String, String> producer = producer(topic, idempotent)) {
            // Connected, its metadata (and producer id) known before the rule, so that the
            // rule meets the first Produce.
            producer.partitionsFor(topic);
            before = lastSequence();
            String answer = call("POST", "/rules", "{\"match\": {\"api\": \"Produce\", \"clientId\": \""
                    + topic + "\"}, \"action\": {\"applyThen\": \"disconnect\"}}");
            Matcher id = Pattern.compile("\"ids\":\\[(\\d+)\\]").matcher(answer);
            check(id.find(), "the rule was not added: " + answer);
            rule = id.group(1);
            send(producer, topic, 0, RETRIED, acked, failed);
            producer.flush();
        }
        check(failed.isEmpty(), topic + ": a send failed: " + failed.peek());
        String log = call("GET", "/log?api=Produce&after=" + before, null);
        check(log.contains("\"outcome\":\"rule " + rule + ": apply, then disconnect\""),
                topic + ": no produce was applied and left unanswered: the fault never fired");
        check(log.contains("\"outcome\":\"answered\""), topic + ": the producer did not retry");
        long end = endOffset(topic);
        if (idempotent) {
            checkOffsets(acked, 0, RETRIED, topic);
            check(end == RETRIED, topic + ": the partition ends at " + end + ", not " + RETRIED);
            return "idempotent: a lost answer retried, " + end + " records in the log (no duplicate)";
        }
        checkOffsets(acked, RETRIED, 2 * RETRIED, topic);
        check(end == 2 * RETRIED, topic + ": the partition ends at " + end + ", not " + 2 * RETRIED);
        return "without idempotence: " + end + " records in the log (each twice)";
    }

    private long endOffset(String topic) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            TopicPartition partition = new TopicPartition(topic, 0);
            return consumer.endOffsets(List.of(partition), GUARD).get(partition);
        }
    }
}
