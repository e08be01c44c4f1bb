package kafkacodec.clients;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client's part of the tap proof: everything goes to BOOTSTRAP (the tap), and any
 * answer that does not match what was sent ends the run with a non-zero status.
 *
 * <p>Creates PREFIX-java (one partition), produces five records with each codec (acks=all)
 * and three with acks=0, consumes all of them in a classic group and in a KIP-848 consumer
 * group, commits and reads back the committed offsets, then lists and describes the topic
 * and the groups. Prints one JSON line saying what it did.
 *
 * <p>Usage: java -cp ... kafkacodec.clients.Workload BOOTSTRAP PREFIX [LOGIN...]
 *
 * <p>LOGIN makes every client log in with SASL as the first user of a mechanism in a users
 * file (MECHANISM USER PASSWORD lines, tools/kafka-broker/sasl-users), over TLS trusting a
 * PKCS12 truststore, or without TLS:
 * {@code --sasl PLAIN|SCRAM-SHA-512 --users FILE (--truststore FILE --truststore-password PW
 * | --protocol SASL_PLAINTEXT)}
 *
 * <p>Or TLS alone, trusting the truststore, presenting the certificate of a PKCS12 keystore
 * if given (a listener with ssl.client.auth=required):
 * {@code --protocol SSL --truststore FILE --truststore-password PW [--keystore FILE
 * --keystore-password PW]}
 */
public final class Workload {
    private static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
    private static final int PER_CODEC = 5;
    private static final int ACKS_ZERO = 3;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String USAGE = "usage: Workload BOOTSTRAP PREFIX [--sasl MECHANISM "
            + "--users FILE (--truststore FILE --truststore-password PW | --protocol SASL_PLAINTEXT)"
            + " | --protocol SSL --truststore FILE --truststore-password PW"
            + " [--keystore FILE --keystore-password PW]]";

    /** Settings every client of the run gets on top of its own: how it logs in (or none). */
    private static Properties login = new Properties();

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            usage();
        }
        String bootstrap = args[0];
        String topic = args[1] + "-java";
        login = login(Arrays.copyOfRange(args, 2, args.length));
        TopicPartition partition = new TopicPartition(topic, 0);

        try (Admin admin = Admin.create(adminProps(bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }

        Set<String> sent = new TreeSet<>();
        for (String codec : CODECS) {
            Properties props = producerProps(bootstrap, "all");
            props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
                for (int i = 0; i < PER_CODEC; i++) {
                    String value = "java " + codec + " record " + i + " " + "x".repeat(40 * i);
                    producer.send(new ProducerRecord<>(topic, 0, bytes("java-" + codec + "-" + i),
                            bytes(value))).get();
                    sent.add(value);
                }
            }
        }
        // acks=0: Produce requests the broker does not answer.
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(producerProps(bootstrap, "0"))) {
            for (int i = 0; i < ACKS_ZERO; i++) {
                String value = "java acks=0 record " + i;
                producer.send(new ProducerRecord<>(topic, 0, null, bytes(value)));
                sent.add(value);
            }
            producer.flush();
        }

        String classicGroup = args[1] + "-java-classic";
        String consumerGroup = args[1] + "-java-consumer";
        for (String[] group : new String[][] {{classicGroup, "classic"}, {consumerGroup, "consumer"}}) {
            Set<String> got = consume(bootstrap, topic, group[0], group[1], sent.size());
            if (!got.equals(sent)) {
                fail("group " + group[0] + " (" + group[1] + ") read " + got + ", sent " + sent);
            }
        }

        try (Admin admin = Admin.create(adminProps(bootstrap))) {
            String loggedIn = login.isEmpty() ? ""
                    : String.format(",\"login\":\"%s %s\"",
                            login.getProperty(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG),
                            login.getProperty(SaslConfigs.SASL_MECHANISM));
            Set<String> topics = admin.listTopics().names().get();
            if (!topics.contains(topic)) {
                fail("listTopics does not name " + topic + ": " + topics);
            }
            TopicDescription description =
                    admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            if (description.partitions().size() != 1) {
                fail("describeTopics: " + description);
            }
            Collection<GroupListing> groups = admin.listGroups().all().get();
            Set<String> names = new HashSet<>();
            for (GroupListing listing : groups) {
                names.add(listing.groupId());
            }
            if (!names.contains(classicGroup) || !names.contains(consumerGroup)) {
                fail("listGroups does not name both groups: " + names);
            }
            Map<String, ConsumerGroupDescription> described =
                    admin.describeConsumerGroups(List.of(classicGroup, consumerGroup)).all().get();
            for (String group : List.of(classicGroup, consumerGroup)) {
                Map<TopicPartition, OffsetAndMetadata> offsets =
                        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
                OffsetAndMetadata committed = offsets.get(partition);
                if (committed == null || committed.offset() != sent.size()) {
                    fail("group " + group + " committed " + offsets + ", want " + sent.size());
                }
            }
            System.out.printf(
                    "{\"client\":\"java\",\"topic\":\"%s\",\"records\":%d,\"groups\":{\"%s\":\"%s\",\"%s\":\"%s\"}%s}%n",
                    topic, sent.size(), classicGroup, described.get(classicGroup).groupState(),
                    consumerGroup, described.get(consumerGroup).groupState(), loggedIn);
        }
    }

    /** Reads until `want` records arrived, commits synchronously, and checks the commit. */
    private static Set<String> consume(String bootstrap, String topic, String group,
            String protocol, int want) {
        Properties props = withLogin();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "kafka-codec-tap-java-" + protocol);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        Set<String> got = new TreeSet<>();
        List<String> all = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (all.size() < want) {
                if (System.nanoTime() > deadline) {
                    fail("group " + group + " read " + all.size() + " of " + want + " records");
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    String value = new String(record.value(), StandardCharsets.UTF_8);
                    all.add(value);
                    got.add(value);
                }
            }
            consumer.commitSync(TIMEOUT);
            TopicPartition partition = new TopicPartition(topic, 0);
            OffsetAndMetadata committed = consumer.committed(Set.of(partition), TIMEOUT).get(partition);
            if (all.size() != want || committed == null || committed.offset() != want) {
                fail("group " + group + " read " + all.size() + " records, committed " + committed
                        + ", want " + want);
            }
        }
        return got;
    }

    private static Properties producerProps(String bootstrap, String acks) {
        Properties props = withLogin();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, acks);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, "kafka-codec-tap-java-producer");
        // The acks=all producers stay idempotent (InitProducerId, sequence numbers); acks=0
        // rules idempotence out.
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(!acks.equals("0")));
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        return props;
    }

    private static Properties adminProps(String bootstrap) {
        Properties props = withLogin();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, "kafka-codec-tap-java-admin");
        return props;
    }

    private static Properties withLogin() {
        Properties props = new Properties();
        props.putAll(login);
        return props;
    }

    /** The client settings that LOGIN (the arguments after PREFIX) asks for. */
    private static Properties login(String[] args) throws IOException {
        Properties props = new Properties();
        if (args.length == 0) {
            return props;
        }
        Map<String, String> options = new java.util.HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 == args.length
                    || options.put(args[i].substring(2), args[i + 1]) != null) {
                usage();
            }
        }
        String mechanism = options.remove("sasl");
        String users = options.remove("users");
        String protocol = options.getOrDefault("protocol", "SASL_SSL");
        options.remove("protocol");
        String truststore = options.remove("truststore");
        String truststorePassword = options.remove("truststore-password");
        String keystore = options.remove("keystore");
        String keystorePassword = options.remove("keystore-password");
        if (protocol.equals("SSL")) {
            if (mechanism != null || users != null || !options.isEmpty() || truststore == null
                    || truststorePassword == null || (keystore == null) != (keystorePassword == null)) {
                usage();
            }
            props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
            props.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PKCS12");
            props.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, truststore);
            props.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, truststorePassword);
            if (keystore != null) {
                props.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PKCS12");
                props.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, keystore);
                props.put(SslConfigs.SSL_KEYSTORE_PASSWORD_CONFIG, keystorePassword);
            }
            return props;
        }
        boolean tls = protocol.equals("SASL_SSL");
        if (mechanism == null || users == null || keystore != null || !options.isEmpty()
                || !(tls || protocol.equals("SASL_PLAINTEXT"))
                || tls != (truststore != null && truststorePassword != null)) {
            usage();
        }
        String module;
        if (mechanism.equals("PLAIN")) {
            module = "org.apache.kafka.common.security.plain.PlainLoginModule";
        } else if (mechanism.equals("SCRAM-SHA-512")) {
            module = "org.apache.kafka.common.security.scram.ScramLoginModule";
        } else {
            fail("unknown SASL mechanism " + mechanism);
            return props;
        }
        String[] user = null;
        for (String line : Files.readAllLines(Path.of(users))) {
            String[] fields = line.strip().split("\\s+");
            if (fields.length == 3 && fields[0].equals(mechanism)) {
                user = fields;
                break;
            }
        }
        if (user == null) {
            fail(users + ": no " + mechanism + " user");
            return props;
        }
        props.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
        props.put(SaslConfigs.SASL_MECHANISM, mechanism);
        // The users file allows letters and digits only, so nothing here needs quoting.
        props.put(SaslConfigs.SASL_JAAS_CONFIG, module + " required username=\"" + user[1]
                + "\" password=\"" + user[2] + "\";");
        if (tls) {
            props.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PKCS12");
            props.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, truststore);
            props.put(SslConfigs.SSL_TRUSTSTORE_PASSWORD_CONFIG, truststorePassword);
        }
        return props;
    }

    private static void usage() {
        System.err.println(USAGE);
        System.exit(2);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static void fail(String message) {
        System.err.println("java client: " + message);
        System.exit(1);
    }

    private Workload() {}
}
