package kafkacodec.clients;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Java kafka-clients meeting more of the faults the in-memory cluster makes on cue, driven
 * through its HTTP control surface (cluster/tests/java.rs; ClusterFaults has the moved leader
 * and the lost answer):
 *
 * <ol>
 *   <li>a broker stopped and restarted while a producer and a consumer run: the partition's
 *       leader is stopped (POST /brokers/0/stop: listener closed, connections dropped) for a
 *       second with records being sent, then restarted; nothing is acknowledged while it is
 *       down, both clients open new connections to it, every record is acknowledged once at
 *       0..n-1 and consumed once;
 *   <li>a group member's session expired mid-consumption (POST /sessions/expire), in a
 *       classic group and in a KIP-848 group: the expired member is told (its partitions
 *       lost), joins again (classic: as a new member; KIP-848: at member epoch 0), the other
 *       keeps its member id, and with each record's offset committed synchronously none is
 *       lost or consumed twice: every record's commit succeeded exactly once, and only a
 *       record whose commit failed is handed out again;
 *   <li>a transactional producer fenced mid-transaction (POST /producers/fence with the
 *       producer id the AdminClient describes): its commit fails with
 *       ProducerFencedException, a read_committed consumer sees none of the transaction's
 *       records (a read_uncommitted one sees they were written), and a new instance with the
 *       same transactional id commits at a later epoch.
 * </ol>
 *
 * Any difference exits non-zero with one line saying what; success prints one summary line.
 *
 * <p>Usage: ClusterFaultsMore BOOTSTRAP CONTROL_HOST:PORT
 */
public final class ClusterFaultsMore extends FaultProof {
    /** The header of each request log entry, in the order the control surface writes it. */
    private static final Pattern ENTRY = Pattern.compile(
            "\\{\"sequence\":(\\d+),\"api\":\"(\\w+)\",\"version\":\\d+,\"correlationId\":-?\\d+,"
                    + "\"clientId\":(?:\"([^\"]*)\"|null),\"broker\":(-?\\d+),\"connection\":(\\d+)");

    private ClusterFaultsMore(String bootstrap, String control) {
        super(bootstrap, control);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClusterFaultsMore BOOTSTRAP CONTROL_HOST:PORT");
            System.exit(2);
        }
        ClusterFaultsMore faults = new ClusterFaultsMore(args[0], args[1]);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]))) {
            admin.createTopics(List.of(
                            new NewTopic("java-restart", 1, (short) 1),
                            new NewTopic("java-expiry-classic", 4, (short) 1),
                            new NewTopic("java-expiry-consumer", 4, (short) 1),
                            new NewTopic("java-fence", 2, (short) 1)))
                    .all()
                    .get();
        }
        List<String> done = new ArrayList<>();
        long start = System.nanoTime();
        done.add(faults.restartedBroker() + took(start));
        start = System.nanoTime();
        done.add(faults.expiredSession("classic") + took(start));
        start = System.nanoTime();
        done.add(faults.expiredSession("consumer") + took(start));
        start = System.nanoTime();
        done.add(faults.fencedTransaction() + took(start));
        System.out.println("java clients: " + String.join("; ", done));
    }

    /** How long a scenario took, for the summary (CI's time budget). */
    private static String took(long start) {
        return " [" + (System.nanoTime() - start) / 1_000_000 + " ms]";
    }

    // 1. A broker stopped and restarted.

    private static final int RESTART_RECORDS = 600;

    /** Broker 0 leads java-restart's one partition; it stops for a second mid-run. */
    private String restartedBroker() throws Exception {
        String topic = "java-restart";
        Queue<Long> acked = new ConcurrentLinkedQueue<>();
        Queue<Exception> failed = new ConcurrentLinkedQueue<>();
        Map<Long, String> consumed = new ConcurrentHashMap<>();
        AtomicReference<String> consumerFailed = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        // The consumer's count of connections opened, as of its latest poll.
        AtomicLong consumerConnections = new AtomicLong();
        Thread consumerThread = new Thread(() -> {
            Properties props = consumerProps("java-restart-consumer", "java-restart", "classic");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(topic));
                while (!stop.get()) {
                    ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(50));
                    for (ConsumerRecord<String, String> record : records) {
                        String previous = consumed.putIfAbsent(record.offset(), record.key());
                        if (previous != null) {
                            consumerFailed.compareAndSet(null, "offset " + record.offset() + " consumed twice");
                        }
                        if (!record.value().equals("value-" + record.key().substring(4))) {
                            consumerFailed.compareAndSet(null, "a record is not as produced: " + record);
                        }
                    }
                    if (!records.isEmpty()) {
                        consumer.commitSync(GUARD);
                    }
                    consumerConnections.set(connectionsCreated(consumer.metrics()));
                }
            } catch (Exception e) {
                consumerFailed.compareAndSet(null, "the consumer failed: " + e);
            }
        });
        consumerThread.start();
        long producerBefore;
        long consumerBefore;
        long stoppedAt;
        long restartedAt;
        int ackedWhileDown;
        long producerAfter;
        try (KafkaProducer<String, String> producer = producer("java-restart", true)) {
            int third = RESTART_RECORDS / 3;
            send(producer, topic, 0, third, acked, failed);
            waitFor(() -> consumed.size() >= third / 2 || consumerFailed.get() != null,
                    "the consumer's first records");
            producer.flush();
            producerBefore = connectionsCreated(producer.metrics());
            consumerBefore = consumerConnections.get();
            call("POST", "/brokers/0/stop", null);
            // The stop closes the broker's connections from its own tasks: a moment for
            // that (a hang guard, not a measurement), then everything after is while down.
            Thread.sleep(200);
            stoppedAt = lastSequence();
            int ackedAtStop = acked.size();
            send(producer, topic, third, 2 * third, acked, failed);
            // Down for a second in all (kept under two: another change fences a broker
            // stopped for longer), the records waiting in the producer.
            Thread.sleep(800);
            ackedWhileDown = acked.size() - ackedAtStop;
            restartedAt = lastSequence();
            call("POST", "/brokers/0/restart", null);
            send(producer, topic, 2 * third, RESTART_RECORDS, acked, failed);
            producer.flush();
            producerAfter = connectionsCreated(producer.metrics());
        }
        waitFor(() -> consumed.size() >= RESTART_RECORDS || consumerFailed.get() != null,
                "the consumer's records after the restart (" + consumed.size() + " of " + RESTART_RECORDS + ")");
        // A few more polls, so a record consumed twice would show.
        Thread.sleep(200);
        stop.set(true);
        consumerThread.join(GUARD.toMillis());
        check(consumerFailed.get() == null, topic + ": " + consumerFailed.get());
        check(failed.isEmpty(), topic + ": a send failed across the restart: " + failed.peek());
        check(ackedWhileDown == 0, topic + ": " + ackedWhileDown + " records acknowledged while the leader was down");
        checkOffsets(acked, 0, RESTART_RECORDS, topic);
        List<Long> offsets = new ArrayList<>(consumed.keySet());
        Collections.sort(offsets);
        check(offsets.size() == RESTART_RECORDS && offsets.get(RESTART_RECORDS - 1) == RESTART_RECORDS - 1,
                topic + ": consumed " + offsets.size() + " records, not offsets 0.." + (RESTART_RECORDS - 1));
        Set<String> keys = new HashSet<>(consumed.values());
        check(keys.size() == RESTART_RECORDS, topic + ": " + keys.size() + " distinct keys consumed");
        long committed = committedOffsets("java-restart", topic, 1).get(0);
        check(committed == RESTART_RECORDS, topic + ": the group committed " + committed);

        // What the clients did: new connections, seen by them and by the cluster.
        long consumerAfter = consumerConnections.get();
        check(producerAfter > producerBefore, topic + ": the producer opened no new connection");
        check(consumerAfter > consumerBefore, topic + ": the consumer opened no new connection");
        List<Entry> log = log(stoppedAt);
        Set<Long> before = new HashSet<>();
        for (Entry entry : log(-1)) {
            if (entry.sequence <= stoppedAt && entry.broker == 0) {
                before.add(entry.connection);
            }
        }
        long whileDown = log.stream().filter(entry -> entry.sequence <= restartedAt && entry.broker == 0).count();
        check(whileDown == 0, topic + ": broker 0 took " + whileDown + " request(s) while stopped");
        for (String[] client : new String[][] {{"java-restart", "Produce"}, {"java-restart-consumer", "Fetch"}}) {
            boolean reconnected = log.stream().anyMatch(entry -> entry.sequence > restartedAt
                    && entry.broker == 0 && client[0].equals(entry.clientId) && client[1].equals(entry.api)
                    && !before.contains(entry.connection));
            check(reconnected, topic + ": no " + client[1] + " from " + client[0]
                    + " on a new connection to the restarted broker");
        }
        return "a broker stopped for 1 s and restarted (nothing acknowledged while down; producer connections "
                + producerBefore + " -> " + producerAfter + ", consumer's "
                + consumerBefore + " -> " + consumerAfter + "), " + RESTART_RECORDS
                + " records acknowledged once at 0.." + (RESTART_RECORDS - 1) + " and consumed once";
    }

    // 2. A member's session expired mid-consumption.

    private static final int EXPIRY_RECORDS = 200;
    private static final int PARTITIONS = 4;

    /** A record's place in the topic. */
    private record Where(int partition, long offset) {}

    /** A member of a group consuming with per-record synchronous commits. */
    private final class Member implements ConsumerRebalanceListener {
        final String name;
        final KafkaConsumer<String, String> consumer;
        final Map<Where, Long> committed;
        final Map<Where, Integer> handedOut;
        final Set<Where> commitFailed;
        final List<String> failures;
        int lost;
        int assigned;

        Member(String name, String group, String protocol, Map<Where, Long> committed,
                Map<Where, Integer> handedOut, Set<Where> commitFailed, List<String> failures) {
            this.name = name;
            Properties props = consumerProps(name, group, protocol);
            // Little prefetched, so that records are still to come when the session expires.
            props.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 512);
            props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10);
            this.consumer = new KafkaConsumer<>(props);
            this.committed = committed;
            this.handedOut = handedOut;
            this.commitFailed = commitFailed;
            this.failures = failures;
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {}

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            assigned++;
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            lost++;
        }

        String memberId() {
            return consumer.groupMetadata().memberId();
        }

        /**
         * One poll; each record counts as consumed once its offset is committed. A failed
         * commit stops this batch's records of that partition and, if the partition is still
         * held, seeks back, so the record is handed out again (at-least-once, made exact by
         * the commits).
         */
        void poll() {
            ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(20));
            Set<TopicPartition> stopped = new HashSet<>();
            for (ConsumerRecord<String, String> record : records) {
                TopicPartition where = new TopicPartition(record.topic(), record.partition());
                if (stopped.contains(where)) {
                    continue;
                }
                Where at = new Where(record.partition(), record.offset());
                if (handedOut.containsKey(at) && !commitFailed.contains(at)) {
                    check(false, name + ": " + at + " handed out again, though its commit had not failed");
                }
                handedOut.merge(at, 1, Integer::sum);
                check(record.value().equals("value-" + record.key().substring(4)),
                        name + ": a record is not as produced: " + record);
                try {
                    consumer.commitSync(Map.of(where, new OffsetAndMetadata(record.offset() + 1)), GUARD);
                } catch (KafkaException e) {
                    commitFailed.add(at);
                    failures.add(e.getClass().getSimpleName());
                    stopped.add(where);
                    if (consumer.assignment().contains(where)) {
                        consumer.seek(where, record.offset());
                    }
                    continue;
                }
                Long previous = committed.putIfAbsent(at, Long.parseLong(record.key().substring(4)));
                check(previous == null, name + ": " + at + " consumed twice");
            }
        }
    }

    /** Two members share a topic of 4 partitions; a's session is expired half way. */
    private String expiredSession(String protocol) throws Exception {
        String topic = "java-expiry-" + protocol;
        String group = topic;
        Map<Where, Long> committed = new HashMap<>();
        Map<Where, Integer> handedOut = new HashMap<>();
        Set<Where> commitFailed = new HashSet<>();
        List<String> failures = new ArrayList<>();
        Member a = new Member(group + "-a", group, protocol, committed, handedOut, commitFailed, failures);
        Member b = new Member(group + "-b", group, protocol, committed, handedOut, commitFailed, failures);
        String summary;
        try (a.consumer; b.consumer) {
            a.consumer.subscribe(List.of(topic), a);
            b.consumer.subscribe(List.of(topic), b);
            // Both hold partitions before the records come, so that the session expires
            // mid-consumption whatever the group's protocol takes to assign.
            pollUntil(a, b, () -> !a.consumer.assignment().isEmpty() && !b.consumer.assignment().isEmpty(),
                    group + ": both members assigned");
            try (KafkaProducer<String, String> producer = producer(topic, true)) {
                produce(producer, topic, 0, EXPIRY_RECORDS);
            }
            pollUntil(a, b, () -> committed.size() >= EXPIRY_RECORDS / 2, group + ": half the records consumed");
            String aId = a.memberId();
            String bId = b.memberId();
            int aGeneration = a.consumer.groupMetadata().generationId();
            int aAssigned = a.assigned;
            int atExpiry = committed.size();
            long expiredAt = lastSequence();
            String answer = call("POST", "/sessions/expire",
                    "{\"group\": \"" + group + "\", \"member\": \"" + aId + "\"}");
            check(answer.contains("\"expired\":true"), group + ": the expiry answered " + answer);
            // Both go on until a has joined again, holds partitions, and every record is
            // consumed; then more records, so both are seen consuming after the rebalance.
            pollUntil(a, b, () -> committed.size() >= EXPIRY_RECORDS && a.lost > 0 && a.assigned > aAssigned
                    && !a.consumer.assignment().isEmpty() && !b.consumer.assignment().isEmpty(),
                    group + ": a rejoined and every record consumed");
            try (KafkaProducer<String, String> producer = producer(topic, true)) {
                produce(producer, topic, EXPIRY_RECORDS, 2 * EXPIRY_RECORDS);
            }
            // Until the group has settled too (the partitions split between the two), so that
            // no assignment is still being handed over when they close.
            pollUntil(a, b, () -> committed.size() >= 2 * EXPIRY_RECORDS
                    && a.consumer.assignment().size() == PARTITIONS / 2
                    && b.consumer.assignment().size() == PARTITIONS / 2,
                    group + ": the second half consumed, the group settled");
            String joined = rejoinedAs(protocol, group, a, aId, aGeneration, expiredAt);
            check(b.memberId().equals(bId), group + ": b's member id changed: " + bId + " -> " + b.memberId());
            check(b.lost == 0, group + ": b lost its partitions too");
            // b leaves first, and a polls until it holds every partition: a member closed
            // while an assignment is being handed to it logs a failed reconciliation.
            b.consumer.close();
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (a.consumer.assignment().size() != PARTITIONS) {
                check(System.nanoTime() < deadline, "hang guard: " + group + ": a takes over b's partitions");
                a.poll();
            }
            summary = protocol + " group: a's session expired after " + atExpiry + " of " + EXPIRY_RECORDS
                    + " records, a lost its partitions and " + joined + ", b kept its member id; "
                    + failures.size() + " commit(s) failed " + new HashSet<>(failures) + ", "
                    + handedOut.values().stream().filter(n -> n > 1).count() + " record(s) handed out again";
        }
        // No record lost or consumed twice: each record committed once, at each offset of
        // each partition; the group's offsets at each partition's end.
        List<Long> indexes = new ArrayList<>(committed.values());
        Collections.sort(indexes);
        for (int i = 0; i < 2 * EXPIRY_RECORDS; i++) {
            check(i < indexes.size() && indexes.get(i) == i,
                    group + ": the committed records are not each of 0.." + (2 * EXPIRY_RECORDS - 1) + " once");
        }
        check(indexes.size() == 2 * EXPIRY_RECORDS, group + ": " + indexes.size() + " records committed");
        Map<Integer, Long> ends = new TreeMap<>();
        for (Where at : committed.keySet()) {
            ends.merge(at.partition(), 1L, Long::sum);
        }
        for (Where at : committed.keySet()) {
            check(at.offset() < ends.get(at.partition()), group + ": " + at + " is past the records committed");
        }
        List<Long> read = committedOffsets(group, topic, PARTITIONS);
        for (int p = 0; p < PARTITIONS; p++) {
            check(read.get(p).equals(ends.getOrDefault(p, 0L)),
                    group + ": committed offsets read back " + read + ", expected " + ends.values());
        }
        return summary + "; " + 2 * EXPIRY_RECORDS + " records each committed once, offsets " + read + " read back";
    }

    /** How a rejoined, as the client and the cluster's request log tell it. */
    private String rejoinedAs(String protocol, String group, Member a, String aId, int aGeneration, long expiredAt)
            throws Exception {
        List<Entry> since = log(expiredAt);
        if (protocol.equals("classic")) {
            check(!a.memberId().equals(aId), group + ": a kept its expired member id " + aId);
            String groups = call("GET", "/groups", null);
            check(!groups.contains("\"member\":\"" + aId + "\""), group + ": a's old member id is still in the group");
            check(groups.contains("\"member\":\"" + a.memberId() + "\""), group + ": a's new member id is not in the group");
            // a was told by a request naming its old id (UNKNOWN_MEMBER_ID), then joined
            // without one.
            long told = since.stream()
                    .filter(e -> e.clientId.equals(a.name) && e.rest.contains("\"memberId\":\"" + aId + "\""))
                    .mapToLong(e -> e.sequence).min().orElse(Long.MAX_VALUE);
            check(told != Long.MAX_VALUE, group + ": no request of a's old member after the expiry");
            boolean fresh = since.stream().anyMatch(e -> e.clientId.equals(a.name) && e.api.equals("JoinGroup")
                    && e.sequence > told && e.rest.contains("\"memberId\":\"\""));
            check(fresh, group + ": a did not join again as a new member after it was told");
            int generation = a.consumer.groupMetadata().generationId();
            check(generation > aGeneration, group + ": the generation stayed at " + generation);
            return "joined again as a new member (generation " + aGeneration + " -> " + generation + ")";
        }
        // KIP-848: the member keeps its id and joins again at epoch 0.
        boolean rejoined = since.stream().anyMatch(e -> e.clientId.equals(a.name)
                && e.api.equals("ConsumerGroupHeartbeat") && e.rest.contains("\"memberId\":\"" + aId + "\"")
                && e.rest.contains("\"memberEpoch\":0,"));
        check(rejoined, group + ": a did not heartbeat at member epoch 0 after its session expired");
        int epoch = a.consumer.groupMetadata().generationId();
        check(epoch > aGeneration, group + ": a's member epoch stayed at " + epoch);
        return "joined again at member epoch 0 (epoch " + aGeneration + " -> " + epoch + ")";
    }

    private void pollUntil(Member a, Member b, BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + GUARD.toNanos();
        while (!done.getAsBoolean()) {
            check(System.nanoTime() < deadline, "hang guard: " + what);
            a.poll();
            b.poll();
        }
    }

    // 3. A transactional producer fenced mid-transaction.

    private static final int FENCED_RECORDS = 30;
    private static final int NEW_RECORDS = 10;

    private String fencedTransaction() throws Exception {
        String topic = "java-fence";
        String transactionalId = "java-fence-txn";
        TransactionDescription ongoing;
        String fenceAnswer;
        String raised;
        try (KafkaProducer<String, String> producer = transactional(transactionalId);
                Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < FENCED_RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, i % 2, "key-" + i, "fenced-" + i));
            }
            producer.flush();
            ongoing = admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get();
            check(ongoing.state() == TransactionState.ONGOING,
                    topic + ": the transaction is " + ongoing.state() + " before the fence, not ongoing");
            fenceAnswer = call("POST", "/producers/fence", "{\"producerId\": " + ongoing.producerId() + "}").trim();
            try {
                producer.commitTransaction();
                raised = null;
            } catch (KafkaException e) {
                raised = e.getClass().getSimpleName();
            }
        }
        check(raised != null, topic + ": the fenced producer's commit succeeded");
        check(raised.equals("ProducerFencedException"), topic + ": the fenced producer's commit raised " + raised);
        TransactionDescription fencedAfter;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            fencedAfter = admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get();
        }
        check(fencedAfter.state() == TransactionState.COMPLETE_ABORT,
                topic + ": after the fence the transaction is " + fencedAfter.state());
        check(fencedAfter.producerEpoch() > ongoing.producerEpoch(), topic + ": the fence did not bump the epoch");

        // A new instance of the transactional id commits.
        try (KafkaProducer<String, String> producer = transactional(transactionalId)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 0; i < NEW_RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, i % 2, "key-" + i, "new-" + i));
            }
            producer.commitTransaction();
        }
        TransactionDescription committed;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            committed = admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get();
        }
        check(committed.state() == TransactionState.COMPLETE_COMMIT,
                topic + ": the new instance's transaction is " + committed.state());
        check(committed.producerEpoch() > fencedAfter.producerEpoch(),
                topic + ": the new instance's epoch " + committed.producerEpoch() + " is not past the fenced one's");

        List<String> readCommitted = readAll(topic, "read_committed");
        List<String> readUncommitted = readAll(topic, "read_uncommitted");
        check(readCommitted.stream().noneMatch(v -> v.startsWith("fenced-")),
                topic + ": read_committed saw the fenced transaction's records: " + readCommitted);
        check(readCommitted.size() == NEW_RECORDS, topic + ": read_committed saw " + readCommitted);
        long written = readUncommitted.stream().filter(v -> v.startsWith("fenced-")).count();
        check(written == FENCED_RECORDS, topic + ": read_uncommitted saw " + written + " of the fenced records");
        return "a transactional producer fenced mid-transaction (" + fenceAnswer + "): its commit raised " + raised
                + ", the transaction aborted (epoch " + ongoing.producerEpoch() + " -> " + fencedAfter.producerEpoch()
                + "), read_committed saw none of its " + FENCED_RECORDS + " records and the new instance's "
                + NEW_RECORDS + " (epoch " + committed.producerEpoch() + ")";
    }

    private KafkaProducer<String, String> transactional(String transactionalId) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) GUARD.toMillis());
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(props);
    }

    /** Every value in `topic` at `isolation`, read from the beginning to the end offsets. */
    private List<String> readAll(String topic, String isolation) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, GUARD);
            long deadline = System.nanoTime() + GUARD.toNanos();
            while (partitions.stream().anyMatch(p -> consumer.position(p, GUARD) < ends.get(p))) {
                check(System.nanoTime() < deadline, "hang guard: reading " + topic + " at " + isolation);
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(100))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }

    // Shared.

    private Properties consumerProps(String clientId, String group, String protocol) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        if (protocol.equals("classic")) {
            // Only the control surface ends a session here; a rebalance is noticed at the
            // next heartbeat, 3 s apart by default.
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30000);
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 100);
        }
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return props;
    }

    /** Records from..to-1 spread over the topic's partitions, every one acknowledged. */
    private static void produce(KafkaProducer<String, String> producer, String topic, int from, int to)
            throws Exception {
        List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
        for (int i = from; i < to; i++) {
            sent.add(producer.send(new ProducerRecord<>(topic, i % PARTITIONS, "key-" + i, "value-" + i)));
        }
        for (java.util.concurrent.Future<?> one : sent) {
            one.get();
        }
    }

    /** The client's count of connections it opened (its "connection-creation-total"). */
    private long connectionsCreated(Map<MetricName, ? extends Metric> metrics) {
        for (Map.Entry<MetricName, ? extends Metric> metric : metrics.entrySet()) {
            MetricName name = metric.getKey();
            if (name.name().equals("connection-creation-total") && name.group().endsWith("-metrics")
                    && !name.group().contains("node")) {
                return ((Number) metric.getValue().metricValue()).longValue();
            }
        }
        check(false, "the client has no connection-creation-total metric");
        return 0;
    }

    /** `group`'s committed offsets of `topic`'s partitions 0..n-1, read by a fresh consumer. */
    private List<Long> committedOffsets(String group, String topic, int partitions) {
        Properties props = consumerProps(group + "-fresh", group, "classic");
        List<Long> offsets = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            Set<TopicPartition> all = new HashSet<>();
            for (int p = 0; p < partitions; p++) {
                all.add(new TopicPartition(topic, p));
            }
            Map<TopicPartition, OffsetAndMetadata> read = consumer.committed(all, GUARD);
            for (int p = 0; p < partitions; p++) {
                OffsetAndMetadata one = read.get(new TopicPartition(topic, p));
                offsets.add(one == null ? 0 : one.offset());
            }
        }
        return offsets;
    }

    /** One request log entry: its header, and the rest of it (outcome, request) as written. */
    private record Entry(long sequence, String api, String clientId, int broker, long connection, String rest) {}

    /** The request log after `sequence` (-1: all of it). */
    private List<Entry> log(long sequence) throws Exception {
        String body = call("GET", sequence < 0 ? "/log" : "/log?after=" + sequence, null);
        List<Entry> entries = new ArrayList<>();
        Matcher matcher = ENTRY.matcher(body);
        List<int[]> spans = new ArrayList<>();
        while (matcher.find()) {
            spans.add(new int[] {matcher.start(), matcher.end()});
            entries.add(new Entry(Long.parseLong(matcher.group(1)), matcher.group(2),
                    matcher.group(3) == null ? "" : matcher.group(3), Integer.parseInt(matcher.group(4)),
                    Long.parseLong(matcher.group(5)), ""));
        }
        List<Entry> withRequests = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            int end = i + 1 < spans.size() ? spans.get(i + 1)[0] : body.length();
            Entry e = entries.get(i);
            withRequests.add(new Entry(e.sequence, e.api, e.clientId, e.broker, e.connection,
                    body.substring(spans.get(i)[1], end)));
        }
        return withRequests;
    }
}
