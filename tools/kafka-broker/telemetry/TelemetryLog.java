// A metrics reporter that makes a Kafka 4.4 broker a client telemetry receiver, for the live
// comparison of GetTelemetrySubscriptions and PushTelemetry (the broker advertises them only
// with such a reporter). Each push is one line in the file `kafka.codec.telemetry.log`
// names: client instance id, terminating, content type, bytes. Compiled by broker.sh when
// KAFKA_TELEMETRY=1; test-only.
package kafkacodec;

import java.io.FileWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.server.telemetry.ClientTelemetryContext;
import org.apache.kafka.server.telemetry.ClientTelemetryExporter;
import org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider;
import org.apache.kafka.server.telemetry.ClientTelemetryPayload;

public class TelemetryLog implements MetricsReporter, ClientTelemetryExporterProvider {
    private volatile String path;

    @Override
    public void configure(Map<String, ?> configs) {
        Object configured = configs.get("kafka.codec.telemetry.log");
        path = configured == null ? null : configured.toString();
    }

    @Override
    public ClientTelemetryExporter clientTelemetryExporter() {
        return this::export;
    }

    private synchronized void export(ClientTelemetryContext context, ClientTelemetryPayload payload) {
        if (path == null) {
            return;
        }
        try (FileWriter out = new FileWriter(path, true)) {
            out.write(payload.clientInstanceId() + " " + payload.isTerminating() + " "
                + payload.contentType() + " " + payload.data().remaining() + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void init(List<KafkaMetric> metrics) {}

    @Override
    public void metricChange(KafkaMetric metric) {}

    @Override
    public void metricRemoval(KafkaMetric metric) {}

    @Override
    public void close() {}
}
