package kafkacodec.clients;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.Queue;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What the fault proofs (ClusterFaults, ClusterFaultsMore) share: the in-memory cluster's
 * HTTP control surface, checks that end the program with one line naming it, and the
 * producer that sends numbered records to partition 0 and collects what was acknowledged.
 */
abstract class FaultProof {
    static final Duration GUARD = Duration.ofSeconds(30);
    static final Pattern SEQUENCE = Pattern.compile("\"sequence\":(\\d+)");

    private final HttpClient http = HttpClient.newHttpClient();
    final String bootstrap;
    private final String control;

    FaultProof(String bootstrap, String control) {
        this.bootstrap = bootstrap;
        this.control = control;
    }

    /** One request to the control surface; its body, or the program ends unless it is 2xx. */
    String call(String method, String path, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://" + control + path))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json");
        request.method(method, body == null
                ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(body));
        HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        check(answer.statusCode() / 100 == 2, method + " " + path + ": " + answer.statusCode() + " " + answer.body());
        return answer.body();
    }

    /** The sequence number of the request log's latest entry (-1: none yet). */
    long lastSequence() throws Exception {
        Matcher matcher = SEQUENCE.matcher(call("GET", "/log", null));
        long last = -1;
        while (matcher.find()) {
            last = Long.parseLong(matcher.group(1));
        }
        return last;
    }

    void waitFor(BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + GUARD.toNanos();
        while (!done.getAsBoolean()) {
            check(System.nanoTime() < deadline, "hang guard: " + what);
            Thread.sleep(10);
        }
    }

    /** Unless `ok`, the program ends (status 1) with one line: its name and `why`. */
    void check(boolean ok, String why) {
        if (!ok) {
            System.err.println(getClass().getSimpleName() + ": " + why);
            System.exit(1);
        }
    }

    KafkaProducer<String, String> producer(String clientId, boolean idempotent) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotent);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 50);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10000);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 25000);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        if (!idempotent) {
            // One request at a time, so a retried batch is the only duplicate.
            props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
        }
        return new KafkaProducer<>(props);
    }

    /** Records from..to-1 to partition 0; each acknowledged offset or error lands in a queue. */
    static void send(KafkaProducer<String, String> producer, String topic, int from, int to,
            Queue<Long> acked, Queue<Exception> failed) {
        for (int i = from; i < to; i++) {
            producer.send(new ProducerRecord<>(topic, 0, "key-" + i, "value-" + i), (metadata, error) -> {
                if (error != null) {
                    failed.add(error);
                } else {
                    acked.add(metadata.offset());
                }
            });
        }
    }

    /** The acknowledged offsets are from..to-1, each once. */
    void checkOffsets(Queue<Long> acked, long from, long to, String topic) {
        List<Long> offsets = new ArrayList<>(acked);
        Collections.sort(offsets);
        List<Long> want = new ArrayList<>();
        for (long offset = from; offset < to; offset++) {
            want.add(offset);
        }
        check(offsets.equals(want), topic + ": acknowledged offsets are not " + from + ".." + (to - 1)
                + " once each: " + offsets.size() + " acknowledgements from " + (offsets.isEmpty() ? "-" : offsets.get(0)));
    }
}
