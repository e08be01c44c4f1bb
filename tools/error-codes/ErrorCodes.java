// Prints Kafka's error table, one line per error: code, name, and whether the client may
// retry (its exception is a RetriableException). Run by tools/import_schemas.py in Java's
// single-file source mode with kafka-clients and slf4j-api on the class path:
//
//   java -cp kafka-clients.jar:slf4j-api.jar tools/error-codes/ErrorCodes.java
//
// Facts only: no exception messages or other text from Kafka is printed.

import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

public class ErrorCodes {
    public static void main(String[] args) {
        StringBuilder out = new StringBuilder();
        for (Errors error : Errors.values()) {
            // NONE has no exception; every other entry has one.
            boolean retriable = error.exception() instanceof RetriableException;
            out.append(error.code()).append('\t')
               .append(error.name()).append('\t')
               .append(retriable).append('\n');
        }
        System.out.print(out);
    }
}
