package kafkacodec.assignor;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordHelpers;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.ShareGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Prints the assignments Kafka 4.4's server-side assignors (UniformAssignor, RangeAssignor) make
 * for a seeded table of groups, each through four steps (the first members; one joins; one
 * leaves; a topic grows), as cluster/tests/data/assignors.txt, which
 * cluster/tests/assignor_reference.rs replays through the cluster's assignors.
 *
 * The inputs are built as the 4.4 group coordinator builds them: the member specs in a HashMap
 * filled in member-id order (TargetAssignmentBuilder), each member's topic ids in the order of
 * its subscribed names as a HashSet (TopicIds), and each member's previous target read back
 * from the target assignment record the coordinator writes and replays (Assignment.fromRecord).
 * Members may carry a rack and partitions have racks; the describer counts whether an assignor
 * asks for them.
 */
public final class AssignorReference {
    private static final String[] RACKS = {"rack-a", "rack-b", "rack-c"};
    private static final String ALPHABET =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    private static int rackQueries = 0;

    record Member(String id, String instance, String rack, List<String> topics) { }

    record Topic(String name, Uuid id, int partitions) { }

    public static void main(String[] args) {
        int cases = args.length > 0 ? Integer.parseInt(args[0]) : 240;
        Random random = new Random(29);
        StringBuilder out = new StringBuilder();
        out.append("# Kafka 4.4's UniformAssignor and RangeAssignor over a seeded table of groups.\n");
        out.append("# Regenerate: java -cp \"$(bash tools/assignor-reference/classpath.sh)\" "
            + "kafkacodec.assignor.AssignorReference > cluster/tests/data/assignors.txt\n");
        for (int c = 0; c < cases; c++) {
            runCase(c, random, out);
        }
        out.append("# racksForPartition calls: ").append(rackQueries).append('\n');
        System.out.print(out);
    }

    static String memberId(Random random, boolean clientStyle, int n) {
        if (!clientStyle) return "member-" + n;
        StringBuilder id = new StringBuilder();
        for (int i = 0; i < 22; i++) id.append(ALPHABET.charAt(random.nextInt(64)));
        return id.toString();
    }

    private static void runCase(int c, Random random, StringBuilder out) {
        String assignorName = c % 2 == 0 ? "uniform" : "range";
        ConsumerGroupPartitionAssignor assignor =
            assignorName.equals("uniform") ? new UniformAssignor() : new RangeAssignor();
        int kind = (c / 2) % 4; // 0, 1: homogeneous; 2, 3: heterogeneous
        boolean racks = (c / 8) % 2 == 1;
        boolean clientIds = random.nextBoolean();
        List<Topic> topics = new ArrayList<>();
        int topicCount = 1 + random.nextInt(4);
        for (int t = 0; t < topicCount; t++) {
            topics.add(new Topic("topic-" + (char) ('a' + t),
                new Uuid(random.nextLong(), random.nextLong()), 1 + random.nextInt(12)));
        }
        int memberCount = 1 + random.nextInt(6);
        int next = 0;
        TreeMap<String, Member> members = new TreeMap<>();
        for (int m = 0; m < memberCount; m++) {
            Member member = newMember(random, clientIds, next++, kind >= 2, racks, topics);
            members.put(member.id, member);
        }
        out.append("case ").append(c).append(' ').append(assignorName).append('\n');
        Map<String, Map<Uuid, Set<Integer>>> previous = new HashMap<>();
        for (int step = 0; step < 4; step++) {
            if (step == 1) {
                Member member = newMember(random, clientIds, next++, kind >= 2, racks, topics);
                members.put(member.id, member);
            } else if (step == 2 && members.size() > 1) {
                List<String> ids = new ArrayList<>(members.keySet());
                members.remove(ids.get(random.nextInt(ids.size())));
            } else if (step == 3) {
                int t = random.nextInt(topics.size());
                Topic grown = topics.get(t);
                topics.set(t, new Topic(grown.name, grown.id, grown.partitions + 1 + random.nextInt(4)));
            }
            previous = step(out, step, assignor, topics, members, previous);
        }
    }

    /**
     * Prints one step's topics and members, runs the assignor over them, prints every member's
     * partitions (the topics it holds none of left out) and returns the targets as replayed.
     */
    static Map<String, Map<Uuid, Set<Integer>>> step(
        StringBuilder out,
        int step,
        PartitionAssignor assignor,
        List<Topic> topics,
        TreeMap<String, Member> members,
        Map<String, Map<Uuid, Set<Integer>>> previous
    ) {
        out.append("step ").append(step).append('\n');
        for (Topic topic : topics) {
            out.append("topic ").append(topic.name).append(' ')
                .append(topic.id.getMostSignificantBits()).append(' ')
                .append(topic.id.getLeastSignificantBits()).append(' ')
                .append(topic.partitions).append('\n');
        }
        for (Member member : members.values()) {
            out.append("member ").append(member.id).append(' ')
                .append(member.instance == null ? "-" : member.instance).append(' ')
                .append(member.rack == null ? "-" : member.rack).append(' ')
                .append(String.join(",", member.topics)).append('\n');
        }
        Map<String, Map<Uuid, Set<Integer>>> targets = assign(assignor, topics, members, previous);
        Map<Uuid, String> names = new HashMap<>();
        for (Topic topic : topics) names.put(topic.id, topic.name);
        for (Member member : members.values()) {
            out.append("assigned ").append(member.id);
            TreeMap<String, TreeSet<Integer>> sorted = new TreeMap<>();
            targets.getOrDefault(member.id, Map.of()).forEach((id, partitions) -> {
                if (!partitions.isEmpty()) sorted.put(names.get(id), new TreeSet<>(partitions));
            });
            sorted.forEach((name, partitions) -> {
                out.append(' ').append(name).append(':');
                StringBuilder list = new StringBuilder();
                for (int p : partitions) list.append(list.length() == 0 ? "" : ",").append(p);
                out.append(list);
            });
            out.append('\n');
        }
        return targets;
    }

    private static Member newMember(Random random, boolean clientIds, int n, boolean heterogeneous,
                                    boolean racks, List<Topic> topics) {
        List<String> subscribed = new ArrayList<>();
        for (Topic topic : topics) {
            if (!heterogeneous || random.nextInt(3) > 0) subscribed.add(topic.name);
        }
        if (subscribed.isEmpty()) subscribed.add(topics.get(random.nextInt(topics.size())).name);
        String instance = random.nextInt(4) == 0 ? "instance-" + random.nextInt(100) : null;
        String rack = racks ? RACKS[random.nextInt(RACKS.length)] : null;
        return new Member(memberId(random, clientIds, n), instance, rack, subscribed);
    }

    /** One run of the assignor as the 4.4 coordinator makes it; the targets as replayed. */
    private static Map<String, Map<Uuid, Set<Integer>>> assign(
        PartitionAssignor assignor,
        List<Topic> topics,
        TreeMap<String, Member> members,
        Map<String, Map<Uuid, Set<Integer>>> previous
    ) {
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        for (Topic topic : topics) {
            ids.put(topic.name, topic.id);
            counts.put(topic.id, topic.partitions);
        }
        Map<String, MemberSubscriptionAndAssignmentImpl> specs = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        Set<Set<String>> subscriptions = new HashSet<>();
        for (Member member : members.values()) {
            Set<String> names = new HashSet<>(member.topics);
            subscriptions.add(names);
            Set<Uuid> topicIds = new java.util.LinkedHashSet<>();
            for (String name : names) topicIds.add(ids.get(name));
            Map<Uuid, Set<Integer>> had = previous.getOrDefault(member.id, Map.of());
            had.forEach((id, partitions) -> partitions.forEach(p ->
                inverted.computeIfAbsent(id, __ -> new HashMap<>()).put(p, member.id)));
            specs.put(member.id, new MemberSubscriptionAndAssignmentImpl(
                Optional.ofNullable(member.rack),
                Optional.ofNullable(member.instance),
                topicIds,
                had.isEmpty() ? Assignment.EMPTY : new Assignment(had)));
        }
        SubscriptionType type = subscriptions.size() <= 1
            ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return counts.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                rackQueries++;
                return Set.of(RACKS[partition % 3], RACKS[(partition + 1) % 3]);
            }
        };
        GroupAssignment result = assignor.assign(
            new GroupSpecImpl(java.util.Collections.unmodifiableMap(specs), type, inverted), describer);
        Map<String, Map<Uuid, Set<Integer>>> targets = new HashMap<>();
        for (Map.Entry<String, MemberAssignment> entry : result.members().entrySet()) {
            // Written as the coordinator writes the target and read back as it replays it.
            if (assignor instanceof ShareGroupPartitionAssignor) {
                CoordinatorRecord record = GroupCoordinatorRecordHelpers.newShareGroupTargetAssignmentRecord(
                    "group", entry.getKey(), entry.getValue().partitions());
                ShareGroupTargetAssignmentMemberValue value =
                    (ShareGroupTargetAssignmentMemberValue) record.value().message();
                targets.put(entry.getKey(), Assignment.fromRecord(value).partitions());
            } else {
                CoordinatorRecord record = GroupCoordinatorRecordHelpers.newConsumerGroupTargetAssignmentRecord(
                    "group", entry.getKey(), entry.getValue().partitions());
                ConsumerGroupTargetAssignmentMemberValue value =
                    (ConsumerGroupTargetAssignmentMemberValue) record.value().message();
                targets.put(entry.getKey(), Assignment.fromRecord(value).partitions());
            }
        }
        return targets;
    }
}
