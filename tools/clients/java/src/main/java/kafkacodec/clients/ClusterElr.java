package kafkacodec.clients;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * The Java AdminClient's describeTopics (DescribeTopicPartitions, KIP-966) reading the
 * eligible leader replicas of a partition whose brokers were fenced through the cluster's
 * HTTP control (cluster/tests/elr.rs). Topic "java-elr": one partition on brokers 0 and 1
 * (broker 2, not a replica, stays up). Broker 1 fenced, then 0: no leader, an empty ISR, 0
 * eligible and the last known leader; 0 back: it leads alone. The states are what Kafka 4.4's
 * PartitionChangeBuilder gives for the same events (tools/elr-reference, trace
 * "scenario 0,1,2 1 0 1 0,1", "fence 1", "fence 0", "unfence 0").
 *
 * <p>Usage: ClusterElr BOOTSTRAP CONTROL_HOST:PORT. Any difference exits non-zero with one
 * line saying what.
 */
public final class ClusterElr {
    private static final String TOPIC = "java-elr";

    private final HttpClient http = HttpClient.newHttpClient();
    private final String control;

    private ClusterElr(String control) {
        this.control = control;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ClusterElr BOOTSTRAP CONTROL_HOST:PORT");
            System.exit(2);
        }
        ClusterElr elr = new ClusterElr(args[1]);
        Map<String, Object> config = Map.of(
                AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0],
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        try (Admin admin = Admin.create(config)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 2))).all().get();
            String placed = shown(describe(admin));
            check(placed.equals("leader 0 isr [0, 1] elr [] lastKnownElr []"), "placed: " + placed);
            for (int broker : new int[] {1, 0}) {
                elr.call("POST", "/brokers/" + broker + "/stop");
                elr.call("POST", "/brokers/" + broker + "/fence");
            }
            String offline = shown(describe(admin));
            check(offline.equals("leader - isr [] elr [0] lastKnownElr [0]"), "both fenced: " + offline);
            elr.call("POST", "/brokers/0/restart");
            String back = shown(describe(admin));
            check(back.equals("leader 0 isr [0] elr [] lastKnownElr []"), "0 back: " + back);
            System.out.println("placed: " + placed);
            System.out.println("both fenced: " + offline);
            System.out.println("0 back: " + back);
        }
    }

    private static TopicPartitionInfo describe(Admin admin) throws Exception {
        TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
        return description.partitions().get(0);
    }

    private static String shown(TopicPartitionInfo partition) {
        Node leader = partition.leader();
        return "leader " + (leader == null || leader.isEmpty() ? "-" : leader.idString())
                + " isr " + ids(partition.isr())
                + " elr " + ids(partition.elr())
                + " lastKnownElr " + ids(partition.lastKnownElr());
    }

    private static String ids(List<Node> nodes) {
        return nodes.stream().map(Node::idString).collect(Collectors.joining(", ", "[", "]"));
    }

    private void call(String method, String path) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + control + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .build();
        HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
        check(answer.statusCode() / 100 == 2, method + " " + path + ": " + answer.statusCode() + " " + answer.body());
    }

    private static void check(boolean ok, String why) {
        if (!ok) {
            System.err.println("ClusterElr: " + why);
            System.exit(1);
        }
    }
}
