package kafkacodec.assignor;

import kafkacodec.assignor.AssignorReference.Member;
import kafkacodec.assignor.AssignorReference.Topic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.assignor.SimpleAssignor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

/**
 * Prints the assignments Kafka 4.4's share group assignor (SimpleAssignor) makes for a seeded
 * table of share groups, each through a sequence of changes (members join and leave, topics
 * grow, subscriptions change), as cluster/tests/data/share-assignor.txt, which
 * cluster/tests/share_assignor_reference.rs replays through the cluster's share assignor.
 *
 * The inputs are built as the 4.4 coordinator builds them (AssignorReference.step, shared with
 * the consumer group assignors): the member specs in a HashMap filled in member-id order, each
 * member's topic ids in the order of its subscribed names as a HashSet, every partition
 * assignable, and each member's previous target written as a share group target assignment
 * record and read back.
 */
public final class ShareAssignorReference {
    public static void main(String[] args) {
        int cases = args.length > 0 ? Integer.parseInt(args[0]) : 120;
        int steps = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        Random random = new Random(932);
        StringBuilder out = new StringBuilder();
        out.append("# Kafka 4.4's SimpleAssignor (share groups) over a seeded table of groups.\n");
        out.append("# Regenerate: java -cp \"$(bash tools/assignor-reference/classpath.sh)\" "
            + "kafkacodec.assignor.ShareAssignorReference > cluster/tests/data/share-assignor.txt\n");
        for (int c = 0; c < cases; c++) {
            runCase(c, steps, false, random, out);
        }
        // Groups that start with one member and change by one event a step (a join, a leave,
        // a topic growing, one member's subscription), as heartbeats can replay them
        // (cluster/tests/share_groups_assignments.rs).
        int eventCases = args.length > 2 ? Integer.parseInt(args[2]) : 24;
        for (int c = cases; c < cases + eventCases; c++) {
            runCase(c, steps, true, random, out);
        }
        System.out.print(out);
    }

    private static String memberId(Random random) {
        return AssignorReference.memberId(random, true, 0);
    }

    private static Member member(String id, List<String> topics) {
        return new Member(id, null, null, topics);
    }

    /** Each topic with probability 2/3, at least one. */
    private static List<String> subscription(Random random, List<Topic> topics) {
        List<String> subscribed = new ArrayList<>();
        for (Topic topic : topics) {
            if (random.nextInt(3) > 0) subscribed.add(topic.name());
        }
        if (subscribed.isEmpty()) subscribed.add(topics.get(random.nextInt(topics.size())).name());
        return subscribed;
    }

    private static void runCase(int c, int steps, boolean events, Random random, StringBuilder out) {
        // Even cases: every member subscribes to the same topics (a change of subscription
        // changes everyone's); odd cases: each member its own.
        boolean heterogeneous = c % 2 == 1;
        List<Topic> topics = new ArrayList<>();
        int topicCount = 1 + random.nextInt(3);
        for (int t = 0; t < topicCount; t++) {
            topics.add(new Topic("topic-" + (char) ('a' + t),
                new Uuid(random.nextLong(), random.nextLong()), 1 + random.nextInt(8)));
        }
        List<String> common = subscription(random, topics);
        TreeMap<String, Member> members = new TreeMap<>();
        int memberCount = events ? 1 : 1 + random.nextInt(8);
        for (int m = 0; m < memberCount; m++) {
            String id = memberId(random);
            members.put(id, member(id, heterogeneous ? subscription(random, topics) : common));
        }
        out.append("case ").append(c).append(events ? " simple-events\n" : " simple\n");
        Map<String, Map<Uuid, Set<Integer>>> previous = new HashMap<>();
        for (int step = 0; step < steps; step++) {
            if (step > 0) {
                int change = random.nextInt(20);
                if (change < 7 || (events && !heterogeneous && change >= 16)) {
                    String id = memberId(random);
                    members.put(id, member(id, heterogeneous ? subscription(random, topics) : common));
                } else if (change < 13 && members.size() > 1) {
                    List<String> ids = new ArrayList<>(members.keySet());
                    members.remove(ids.get(random.nextInt(ids.size())));
                } else if (change < 16) {
                    int t = random.nextInt(topics.size());
                    Topic grown = topics.get(t);
                    topics.set(t, new Topic(grown.name(), grown.id(), grown.partitions() + 1 + random.nextInt(3)));
                } else if (heterogeneous) {
                    List<String> ids = new ArrayList<>(members.keySet());
                    String id = ids.get(random.nextInt(ids.size()));
                    members.put(id, member(id, subscription(random, topics)));
                } else {
                    common = subscription(random, topics);
                    for (String id : new ArrayList<>(members.keySet())) members.put(id, member(id, common));
                }
            }
            previous = AssignorReference.step(out, step, new SimpleAssignor(), topics, members, previous);
        }
    }
}
