// AlterPartitionReassignments, ListPartitionReassignments, AlterReplicaLogDirs and
// ListConfigResources through Kafka's own AdminClient, against one bootstrap: each case's
// outcome (success, or the exception class and message the AdminClient built from the
// broker's error code and message) on one line, so that a real Kafka 4.4 broker's lines and
// the in-memory cluster's can be diffed. Single-file source launch, the broker's jars on the
// class path (tools/clients/reassignments-proof.sh runs it against both):
//
//   java -cp "target/kafka-broker/lib/*" tools/clients/ReassignmentsVsBroker.java BOOTSTRAP RUN
//
// Broker ids are written relative to the first broker DescribeCluster lists (B), so that a
// broker with node id 1 and a cluster whose broker is 0 print the same lines.

import java.util.*;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.config.ConfigResource;

public class ReassignmentsVsBroker {
    /** The first broker's id, which messages naming a broker are written relative to. */
    static int b;

    static String outcome(org.apache.kafka.common.KafkaFuture<?> future) {
        return relative(absolute(future));
    }

    static String relative(String line) {
        return line.replace("broker " + (b + 99), "broker B+99").replace("broker " + b + " ", "broker B ");
    }

    static String absolute(org.apache.kafka.common.KafkaFuture<?> future) {
        try {
            Object value = future.get();
            return "ok" + (value == null ? "" : " " + value);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            return cause.getClass().getSimpleName() + ": " + cause.getMessage();
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = "ra-" + args[1];
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(props)) {
            b = admin.describeCluster().nodes().get().iterator().next().id();
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            // Until the topic is known to the broker's metadata.
            for (int i = 0; i < 100; i++) {
                if (admin.describeTopics(List.of(topic)).allTopicNames().get().containsKey(topic)) break;
                Thread.sleep(100);
            }
            Map<String, Optional<NewPartitionReassignment>> cases = new LinkedHashMap<>();
            Map<String, TopicPartition> partitions = new LinkedHashMap<>();
            TopicPartition p0 = new TopicPartition(topic, 0);
            put(cases, partitions, "unknown-topic", new TopicPartition("ra-missing-" + args[1], 0), List.of(b));
            put(cases, partitions, "unknown-partition", new TopicPartition(topic, 5), List.of(b));
            put(cases, partitions, "duplicate", p0, List.of(b, b));
            put(cases, partitions, "unregistered", p0, List.of(b, b + 99));
            cases.put("cancel-none", Optional.empty());
            partitions.put("cancel-none", p0);
            put(cases, partitions, "same", p0, List.of(b));
            for (Map.Entry<String, Optional<NewPartitionReassignment>> c : cases.entrySet()) {
                TopicPartition tp = partitions.get(c.getKey());
                AlterPartitionReassignmentsResult result =
                    admin.alterPartitionReassignments(Map.of(tp, c.getValue()));
                System.out.println("alter " + c.getKey() + ": " + outcome(result.values().get(tp)));
            }
            AlterPartitionReassignmentsOptions fixed =
                new AlterPartitionReassignmentsOptions().allowReplicationFactorChange(false);
            AlterPartitionReassignmentsResult result = admin.alterPartitionReassignments(
                Map.of(p0, Optional.of(new NewPartitionReassignment(List.of(b)))), fixed);
            System.out.println("alter same-factor-fixed: " + outcome(result.values().get(p0)));
            System.out.println("list all: " + outcome(admin.listPartitionReassignments().reassignments()));
            System.out.println("list named: "
                + outcome(admin.listPartitionReassignments(Set.of(p0)).reassignments()));

            // AlterReplicaLogDirs: the broker's own dir, as DescribeLogDirs names it, and another.
            String dir = admin.describeLogDirs(List.of(b)).allDescriptions().get().get(b)
                .keySet().iterator().next();
            Map<String, TopicPartitionReplica> replicas = new LinkedHashMap<>();
            Map<String, String> dirs = new LinkedHashMap<>();
            replicas.put("own-dir", new TopicPartitionReplica(topic, 0, b));
            dirs.put("own-dir", dir);
            replicas.put("other-dir", new TopicPartitionReplica(topic, 0, b));
            dirs.put("other-dir", "/no/such/dir");
            replicas.put("unknown-partition", new TopicPartitionReplica(topic, 7, b));
            dirs.put("unknown-partition", dir);
            for (String name : replicas.keySet()) {
                TopicPartitionReplica replica = replicas.get(name);
                AlterReplicaLogDirsResult moved =
                    admin.alterReplicaLogDirs(Map.of(replica, dirs.get(name)));
                System.out.println("log-dirs " + name + ": " + outcome(moved.values().get(replica)));
            }

            // ListConfigResources v0 (client metrics) and v1 of topics: is ours listed?
            System.out.println("client-metrics: " + outcome(admin.listConfigResources(
                Set.of(ConfigResource.Type.CLIENT_METRICS), new ListConfigResourcesOptions()).all()));
            Collection<ConfigResource> topics = admin.listConfigResources(
                Set.of(ConfigResource.Type.TOPIC), new ListConfigResourcesOptions()).all().get();
            System.out.println("topic-resources: ours listed "
                + topics.contains(new ConfigResource(ConfigResource.Type.TOPIC, topic)));
            admin.deleteTopics(List.of(topic)).all().get();
        }
    }

    static void put(Map<String, Optional<NewPartitionReassignment>> cases,
                    Map<String, TopicPartition> partitions, String name, TopicPartition tp,
                    List<Integer> replicas) {
        cases.put(name, Optional.of(new NewPartitionReassignment(replicas)));
        partitions.put(name, tp);
    }
}
