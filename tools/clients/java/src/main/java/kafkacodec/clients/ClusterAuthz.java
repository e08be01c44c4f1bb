package kafkacodec.clients;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * ACLs entry by entry, as the Java AdminClient sees them (cluster/tests/authorization.rs runs
 * it against a real Kafka 4.4 broker with StandardAuthorizer and against the cluster, and
 * compares the lines printed). The admin (a super user) creates PREFIX-jallowed and
 * PREFIX-jdenied and two transactional ids, PREFIX-ok-txn and PREFIX-no-txn (a transactional
 * producer initialized, so each is Empty); the user may DESCRIBE PREFIX-jallowed and the ids
 * prefixed PREFIX-ok-; User:nobody holds an ACL on the others, so that a broker open where no
 * ACL names a resource still decides by ACL. The user then describes both topics with their
 * authorized operations (DescribeTopicPartitions), lists the topics (Metadata), lists the
 * transactions and describes both. Prints one JSON line of outcomes; the ACLs and topics are
 * deleted at the end, whatever happened.
 *
 * <p>Usage: ClusterAuthz ADMIN_BOOTSTRAP ADMIN_USER ADMIN_PASSWORD USER_BOOTSTRAP USER PASSWORD
 * PREFIX (ADMIN_USER "-": the admin connects without SASL).
 */
public final class ClusterAuthz {
    private static final long TIMEOUT_S = 20;

    private ClusterAuthz() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: ClusterAuthz ADMIN_BOOTSTRAP ADMIN_USER ADMIN_PASSWORD "
                    + "USER_BOOTSTRAP USER PASSWORD PREFIX");
            System.exit(2);
        }
        Properties adminProps = props(args[0], args[1], args[2]);
        Properties userProps = props(args[3], args[4], args[5]);
        String user = "User:" + args[4];
        String prefix = args[6];
        Map<String, Object> outcome;
        try (Admin admin = Admin.create(adminProps)) {
            try {
                outcome = run(admin, adminProps, userProps, user, prefix);
            } finally {
                // Exactly the bindings made here: a filter by principal would also remove the
                // ACLs of the librdkafka scenario, which runs at the same broker at the same
                // time with the same users.
                List<AclBindingFilter> filters = new ArrayList<>();
                for (AclBinding binding : acls(user, prefix)) {
                    filters.add(binding.toFilter());
                }
                admin.deleteAcls(filters).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                try {
                    admin.deleteTopics(List.of(prefix + "-jallowed", prefix + "-jdenied"))
                            .all().get(TIMEOUT_S, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    // Not created when the scenario failed early.
                }
            }
        }
        System.out.println(json(outcome));
    }

    private static Properties props(String bootstrap, String user, String password) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        if (!user.equals("-")) {
            props.put("security.protocol", "SASL_PLAINTEXT");
            props.put("sasl.mechanism", "PLAIN");
            props.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule"
                    + " required username=\"" + user + "\" password=\"" + password + "\";");
        }
        return props;
    }

    private static Map<String, Object> run(Admin admin, Properties adminProps,
            Properties userProps, String user, String prefix) throws Exception {
        String allowed = prefix + "-jallowed";
        String denied = prefix + "-jdenied";
        String okTxn = prefix + "-ok-txn";
        String noTxn = prefix + "-no-txn";
        admin.createTopics(List.of(new NewTopic(allowed, 1, (short) 1),
                new NewTopic(denied, 1, (short) 1))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        for (String id : List.of(okTxn, noTxn)) {
            Properties producerProps = new Properties();
            producerProps.putAll(adminProps);
            producerProps.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps,
                    new StringSerializer(), new StringSerializer())) {
                producer.initTransactions();
            }
        }
        admin.createAcls(acls(user, prefix))
                .all().get(TIMEOUT_S, TimeUnit.SECONDS);
        // The broker's authorizer applies new ACLs from its metadata log.
        Thread.sleep(1000);

        Map<String, Object> outcome = new TreeMap<>();
        try (Admin asUser = Admin.create(userProps)) {
            Map<String, Object> topics = new TreeMap<>();
            Map<String, KafkaFuture<org.apache.kafka.clients.admin.TopicDescription>> described =
                    asUser.describeTopics(TopicCollection.ofTopicNames(List.of(allowed, denied)),
                            new DescribeTopicsOptions().includeAuthorizedOperations(true))
                            .topicNameValues();
            for (var entry : described.entrySet()) {
                topics.put(entry.getKey().substring(prefix.length()), outcome(() -> {
                    var operations = entry.getValue().get(TIMEOUT_S, TimeUnit.SECONDS)
                            .authorizedOperations();
                    return operations == null ? null
                            : operations.stream().map(Enum::name).sorted().toList();
                }));
            }
            outcome.put("describe_topics", topics);
            outcome.put("list_topics", outcome(() -> asUser.listTopics().names()
                    .get(TIMEOUT_S, TimeUnit.SECONDS).stream()
                    .filter(name -> name.startsWith(prefix))
                    .map(name -> name.substring(prefix.length())).sorted().toList()));
            outcome.put("list_transactions", outcome(() -> asUser.listTransactions().all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS).stream()
                    .map(TransactionListing::transactionalId)
                    .filter(id -> id.startsWith(prefix))
                    .map(id -> id.substring(prefix.length())).sorted().toList()));
            Map<String, Object> transactions = new TreeMap<>();
            var describedTransactions = asUser.describeTransactions(List.of(okTxn, noTxn));
            for (String id : List.of(okTxn, noTxn)) {
                transactions.put(id.substring(prefix.length()), outcome(() ->
                        describedTransactions.description(id).get(TIMEOUT_S, TimeUnit.SECONDS)
                                .state().toString()));
            }
            outcome.put("describe_transactions", transactions);
        }
        return outcome;
    }

    /** The ACLs the scenario makes (and removes, one by one, at the end). */
    private static List<AclBinding> acls(String user, String prefix) {
        String allowed = prefix + "-jallowed";
        String denied = prefix + "-jdenied";
        return List.of(
                allow(ResourceType.TOPIC, allowed, PatternType.LITERAL, user, AclOperation.DESCRIBE),
                allow(ResourceType.TOPIC, denied, PatternType.LITERAL, "User:nobody",
                        AclOperation.READ),
                allow(ResourceType.TRANSACTIONAL_ID, prefix + "-ok-", PatternType.PREFIXED, user,
                        AclOperation.DESCRIBE),
                allow(ResourceType.TRANSACTIONAL_ID, prefix + "-no-", PatternType.PREFIXED,
                        "User:nobody", AclOperation.DESCRIBE));
    }

    private static AclBinding allow(ResourceType type, String name, PatternType pattern,
            String principal, AclOperation operation) {
        return new AclBinding(new ResourcePattern(type, name, pattern),
                new AccessControlEntry(principal, "*", operation, AclPermissionType.ALLOW));
    }

    private interface Outcome {
        Object get() throws Exception;
    }

    /** The value, or the simple name of the exception the client raised. */
    private static Object outcome(Outcome outcome) {
        try {
            return outcome.get();
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (Exception e) {
            return e.getClass().getSimpleName();
        }
    }

    /** Maps (sorted), lists and strings as JSON. */
    private static String json(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof Map<?, ?> map) {
            List<String> fields = new ArrayList<>();
            map.forEach((key, item) -> fields.add(json(key) + ": " + json(item)));
            return "{" + String.join(", ", fields) + "}";
        }
        if (value instanceof List<?> list) {
            return "[" + String.join(", ", list.stream().map(ClusterAuthz::json).toList()) + "]";
        }
        return "\"" + value.toString().replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
