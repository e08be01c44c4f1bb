package kafkacodec.elr;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;

import org.apache.kafka.common.DirectoryId;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.controller.PartitionChangeBuilder;
import org.apache.kafka.metadata.LeaderRecoveryState;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * Replays a trace of broker fences, unfences and config changes through Kafka 4.4's own
 * partition change builder, as its controller's ReplicationControlManager applies them, and
 * prints every partition after each event. cluster/tests/elr_reference.rs writes the trace
 * (stdin) and compares the lines (stdout) with what the cluster's state shows.
 *
 * Trace lines:
 *   scenario BROKERS MIN_ISR UNCLEAN ELR REPLICAS/REPLICAS/...   (a topic, every replica in
 *                                                                  sync, the first leading)
 *   fence B | unfence B | unclean_restart B | elect_unclean | min_isr N | unclean 0|1
 * Output, after the scenario line and after each event, one line per partition:
 *   LEADER EPOCH ISR ELR LAST_KNOWN_ELR PARTITION_EPOCH   (lists comma separated, "-" when
 *                                                          empty)
 */
public final class ElrReference {
    private static final MetadataVersion VERSION = MetadataVersion.latestProduction();
    private static final Uuid TOPIC = new Uuid(1L, 1L);

    private final Set<Integer> brokers;
    private final Set<Integer> fenced = new TreeSet<>();
    private final List<PartitionRegistration> partitions = new ArrayList<>();
    private final boolean elr;
    private int minIsr;
    private boolean unclean;

    private ElrReference(Set<Integer> brokers, int minIsr, boolean unclean, boolean elr, List<int[]> replicas) {
        this.brokers = brokers;
        this.minIsr = minIsr;
        this.unclean = unclean;
        this.elr = elr;
        for (int[] list : replicas) {
            partitions.add(new PartitionRegistration.Builder()
                .setReplicas(list)
                .setDirectories(DirectoryId.unassignedArray(list.length))
                .setIsr(list)
                .setLeader(list[0])
                .setLeaderRecoveryState(LeaderRecoveryState.RECOVERED)
                .setLeaderEpoch(0)
                .setPartitionEpoch(0)
                .build());
        }
    }

    private boolean active(int broker) {
        return brokers.contains(broker) && !fenced.contains(broker);
    }

    /** min.insync.replicas capped by the replication factor, as getTopicEffectiveMinIsr. */
    private int effectiveMinIsr(PartitionRegistration partition) {
        return Math.min(minIsr, partition.replicas.length);
    }

    private void change(int index, IntPredicate acceptable, List<Integer> targetIsr) {
        change(index, acceptable, targetIsr, -1);
    }

    /** One partition change; uncleanShutdown (unless -1) as setUncleanShutdownReplicas. */
    private void change(int index, IntPredicate acceptable, List<Integer> targetIsr, int uncleanShutdown) {
        PartitionRegistration partition = partitions.get(index);
        PartitionChangeBuilder builder = new PartitionChangeBuilder(
            partition, TOPIC, index, acceptable, VERSION, effectiveMinIsr(partition), elr);
        if (unclean) {
            builder.setElection(PartitionChangeBuilder.Election.UNCLEAN);
        }
        if (uncleanShutdown >= 0) {
            builder.setUncleanShutdownReplicas(List.of(uncleanShutdown));
        }
        builder.setTargetIsr(targetIsr)
            .setDefaultDirProvider(broker -> DirectoryId.UNASSIGNED)
            .build()
            .ifPresent(record -> partitions.set(index, partition.merge((PartitionChangeRecord) record.message())));
    }

    /** handleBrokerFenced: every partition whose ISR holds it loses it. */
    private void fence(int broker) {
        if (!fenced.add(broker)) {
            return;
        }
        for (int index = 0; index < partitions.size(); index++) {
            PartitionRegistration partition = partitions.get(index);
            if (contains(partition.isr, broker)) {
                List<Integer> target = Arrays.stream(partition.isr).filter(r -> r != broker).boxed()
                    .collect(Collectors.toList());
                change(index, r -> r != broker && active(r), target);
            }
        }
    }

    /**
     * The ISR a Kafka 4.4 leader sends in the AlterPartition that adds {@code joining}, made with
     * the calls its kafka.cluster.Partition.prepareIsrExpand makes (read with javap -c from
     * kafka_2.13-4.4.0.jar): the committed ISR, a java.util.Set, seen as a Scala mutable set,
     * mapped (into a Scala mutable.HashSet), {@code + joining}, then {@code toList}. The
     * controller keeps that order: ReplicationControlManager.alterPartition passes the list to
     * PartitionChangeBuilder.setTargetIsrWithBrokerStates, whose build() writes it unsorted.
     */
    @SuppressWarnings({"unchecked", "rawtypes", "deprecation"})
    static List<Integer> expandIsr(int[] isr, int joining) {
        Set<Integer> committed = new LinkedHashSet<>();
        Arrays.stream(isr).forEach(committed::add);
        scala.collection.mutable.Set<Integer> asScala =
            scala.jdk.CollectionConverters$.MODULE$.SetHasAsScala(committed).asScala();
        Object mapped = asScala.map((scala.Function1<Integer, Object>) id -> id);
        Object expanded = ((scala.collection.SetOps) mapped).$plus(joining);
        scala.collection.immutable.List<Integer> sent = ((scala.collection.mutable.Set) expanded).toList();
        return new ArrayList<>(scala.jdk.javaapi.CollectionConverters.asJava(sent));
    }

    /**
     * handleBrokerUnfenced: the partitions without a leader elect one, it among the acceptable
     * leaders; then (the cluster's catch-up at once) the leader's AlterPartitions add each
     * unfenced replica out of the ISR, one at a time in replicas order (the leader has one
     * ISR change in flight at most), each list as {@link #expandIsr} makes it.
     */
    private void unfence(int broker) {
        if (!fenced.remove(broker)) {
            return;
        }
        for (int index = 0; index < partitions.size(); index++) {
            PartitionRegistration partition = partitions.get(index);
            if (partition.leader < 0) {
                change(index, r -> r == broker || active(r), toList(partition.isr));
            }
            partition = partitions.get(index);
            if (partition.leader < 0) {
                continue;
            }
            int[] isr = partition.isr;
            int[] joining = Arrays.stream(partition.replicas)
                .filter(r -> !contains(isr, r) && active(r)).toArray();
            for (int replica : joining) {
                PartitionRegistration current = partitions.get(index);
                if (current.leader < 0) {
                    break;
                }
                change(index, this::active, expandIsr(current.isr, replica));
            }
        }
    }

    /**
     * A broker registered again after an unclean shutdown, then unfenced: the registration
     * is fenced, and ClusterControlManager.registerBroker's shutdown handler runs
     * handleBrokerShutdown(id, false): with ELR on, handleBrokerUncleanShutdown (the
     * partitions whose ISR holds it, then those whose ELR does, it not acceptable as leader
     * and out of the target ISR, setUncleanShutdownReplicas(it)); with ELR off, the
     * partitions whose ISR holds it lose it. Then its heartbeat unfences it.
     */
    private void uncleanRestart(int broker) {
        fenced.add(broker);
        List<Integer> inIsr = new ArrayList<>();
        List<Integer> inElr = new ArrayList<>();
        for (int index = 0; index < partitions.size(); index++) {
            PartitionRegistration partition = partitions.get(index);
            if (contains(partition.isr, broker)) {
                inIsr.add(index);
            } else if (elr && contains(partition.elr, broker)) {
                inElr.add(index);
            }
        }
        inIsr.addAll(inElr);
        for (int index : inIsr) {
            int[] isr = partitions.get(index).isr;
            List<Integer> target = Arrays.stream(isr).filter(r -> r != broker).boxed()
                .collect(Collectors.toList());
            change(index, r -> r != broker && active(r), target, elr ? broker : -1);
        }
        unfence(broker);
    }

    /**
     * The controller's periodic task electUnclean (maybeElectUncleanLeaders): each
     * partition without a leader, when unclean leader election is on, goes through electLeader
     * with ElectionType.UNCLEAN (the target ISR its own, the active brokers acceptable).
     */
    private void electUnclean() {
        if (!unclean) {
            return;
        }
        for (int index = 0; index < partitions.size(); index++) {
            PartitionRegistration partition = partitions.get(index);
            if (partition.leader < 0) {
                change(index, this::active, toList(partition.isr));
            }
        }
    }

    /** A changed min.insync.replicas: ClearElrRecord for the topic (with ELR on). */
    private void setMinIsr(int value) {
        if (value == minIsr) {
            return;
        }
        minIsr = value;
        if (!elr) {
            return;
        }
        for (int index = 0; index < partitions.size(); index++) {
            PartitionRegistration partition = partitions.get(index);
            if (partition.elr.length == 0 && partition.lastKnownElr.length == 0) {
                continue;
            }
            partitions.set(index, partition.merge(new PartitionChangeRecord()
                .setPartitionId(index).setTopicId(TOPIC)
                .setEligibleLeaderReplicas(List.of()).setLastKnownElr(List.of())));
        }
    }

    private void print(PrintStream out) {
        for (PartitionRegistration partition : partitions) {
            out.println(partition.leader + " " + partition.leaderEpoch + " " + list(partition.isr) + " "
                + list(partition.elr) + " " + list(partition.lastKnownElr) + " " + partition.partitionEpoch);
        }
    }

    private static boolean contains(int[] array, int value) {
        return Arrays.stream(array).anyMatch(v -> v == value);
    }

    private static List<Integer> toList(int[] array) {
        return Arrays.stream(array).boxed().collect(Collectors.toList());
    }

    private static String list(int[] array) {
        if (array.length == 0) {
            return "-";
        }
        return Arrays.stream(array).mapToObj(Integer::toString).collect(Collectors.joining(","));
    }

    private static int[] ints(String csv) {
        return Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        ElrReference scenario = null;
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.trim().split(" ");
            switch (words[0]) {
                case "scenario": {
                    Set<Integer> brokers = new TreeSet<>();
                    Arrays.stream(ints(words[1])).forEach(brokers::add);
                    List<int[]> replicas = Arrays.stream(words[5].split("/"))
                        .map(ElrReference::ints).collect(Collectors.toList());
                    scenario = new ElrReference(brokers, Integer.parseInt(words[2]), words[3].equals("1"),
                        words[4].equals("1"), replicas);
                    break;
                }
                case "fence":
                    scenario.fence(Integer.parseInt(words[1]));
                    break;
                case "unclean_restart":
                    scenario.uncleanRestart(Integer.parseInt(words[1]));
                    break;
                case "elect_unclean":
                    scenario.electUnclean();
                    break;
                case "unfence":
                    scenario.unfence(Integer.parseInt(words[1]));
                    break;
                case "min_isr":
                    scenario.setMinIsr(Integer.parseInt(words[1]));
                    break;
                case "unclean":
                    scenario.unclean = words[1].equals("1");
                    break;
                case "":
                    continue;
                default:
                    throw new IllegalArgumentException("unknown trace line: " + line);
            }
            scenario.print(out);
        }
        out.flush();
    }
}
