package kafkacodec.oracle;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * Test oracle for kafka-codec: a long-lived process that answers encode/decode questions with
 * Apache Kafka's own generated message classes, so our Rust codec can be compared byte for byte.
 *
 * <p>Protocol: one JSON object per stdin line in, exactly one JSON object per stdout line out
 * (flushed each time), until EOF. Every failure, whatever it is, becomes an error line.
 * <pre>
 *   {"id":1,"op":"ping"}                                          -> {"id":1,"ok":true,"kafka":"4.4.0"}
 *   {"id":2,"op":"encode","schema":S,"version":V,"json":{...}}    -> {"id":2,"ok":true,"hex":"..."}
 *   {"id":3,"op":"decode","schema":S,"version":V,"hex":"..."}     -> {"id":3,"ok":true,"json":{...}}
 *   {"id":4,"op":"records_build","batches":[B,...]}                 -> {"id":4,"ok":true,"hex":"..."}
 *   {"id":5,"op":"records_read","hex":"..."}                       -> {"id":5,"ok":true,"batches":[B,...]}
 *   failure                                                       -> {"id":3,"ok":false,"kind":K,"error":msg}
 * </pre>
 * K is the simple class name of the exception (e.g. UnsupportedVersionException), or one of our
 * own kinds: TrailingBytes (also carries "trailing": count), UnknownSchema, BadRequest.
 * Versions outside the message's validVersions are refused as UnsupportedVersionException.
 *
 * <p>Records fields (schema type "records"): Kafka's JSON converter writes them as "" and so
 * loses the content. We speak our Rust JSON form instead: the value is the standard base64
 * (padded) of the raw record bytes, or null. On decode we overwrite each records value in the
 * converter's output with base64 of {@code MemoryRecords.buffer()} from the decoded object. On
 * encode nothing needs patching: the generated read() already turns a base64 text node into
 * {@code MemoryRecords.readableRecords(bytes)} (Jackson's binaryValue() decodes base64; it
 * insists on the '=' padding, which our form always writes).
 */
public final class Oracle {

    private static final String PKG = "org.apache.kafka.common.message.";
    // Record sets can be large; lift Jackson's default cap on one string token.
    static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
            .build())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS); // one request per line, nothing after it
    static final HexFormat HEX = HexFormat.of();
    // Where Kafka keeps record sets: its packages moved in 4.0, so each build has its own.
    private static final RecordsSupport RECORDS = RecordsSupport.load();

    // Reflection is done once per schema / class: thousands of cases must run in seconds.
    private static final Map<String, Schema> SCHEMAS = new HashMap<>();
    private static final Map<Class<?>, List<Step>> PLANS = new HashMap<>();

    /** Everything needed to drive one generated message class. */
    private record Schema(Class<?> cls, Constructor<?> reader, Method fromJson, Method toJson,
                          short lowest, short highest, List<Step> records) {}

    /** One hop from a message object towards its records fields. JSON key == Java field name. */
    private record Step(String key, Method getter, Kind kind, List<Step> below) {}

    private enum Kind { RECORDS, STRUCT, ARRAY }

    // Our own failure kinds; the class name is what goes on the wire as "kind".
    public static class BadRequest extends RuntimeException {
        public BadRequest(String m) { super(m); }
    }
    static final class UnknownSchema extends BadRequest {
        UnknownSchema(String m) { super(m); }
    }
    static final class TrailingBytes extends RuntimeException {
        final int count;
        TrailingBytes(int count, String m) { super(m); this.count = count; }
    }

    public static void main(String[] args) throws IOException {
        // Keep stdout for protocol lines only: anything a library prints goes to stderr.
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, UTF_8), 1 << 16);
        while (true) {
            String reply;
            try {
                String line = in.readLine();
                if (line == null) break;
                reply = handle(line);
            } catch (IOException e) {
                throw e; // stdin itself is broken: nothing sensible left to answer
            } catch (Throwable t) { // e.g. OutOfMemoryError while reading a huge line
                reply = errorLine(null, t);
            }
            out.write(reply.getBytes(UTF_8));
            out.write('\n');
            out.flush();
        }
        out.flush();
    }

    /** Answers one request line; never throws. */
    static String handle(String line) {
        JsonNode id = null;
        try {
            JsonNode req = MAPPER.readTree(line);
            if (req == null || !req.isObject()) throw new BadRequest("request must be a JSON object");
            id = req.get("id");
            ObjectNode reply = MAPPER.createObjectNode();
            if (id != null) reply.set("id", id);
            reply.put("ok", true);
            String op = text(req, "op");
            switch (op) {
                case "ping" -> reply.put("kafka", kafkaVersion());
                case "encode" -> {
                    Schema s = schema(text(req, "schema"));
                    reply.put("hex", encode(s, version(req, s), need(req, "json")));
                }
                case "decode" -> {
                    Schema s = schema(text(req, "schema"));
                    reply.set("json", decode(s, version(req, s), text(req, "hex")));
                }
                case "records_build" -> reply.put("hex", HEX.formatHex(RECORDS.build(need(req, "batches"))));
                case "records_read" -> reply.set("batches", RECORDS.read(HEX.parseHex(text(req, "hex"))));
                default -> throw new BadRequest("unknown op: " + op);
            }
            return MAPPER.writeValueAsString(reply);
        } catch (Throwable t) {
            return errorLine(id, t);
        }
    }

    static String encode(Schema s, short version, JsonNode json) throws Throwable {
        Message msg = (Message) call(s.fromJson, null, json, version);
        // Plain body bytes (no version prefix), exactly as Kafka puts them on the wire.
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = msg.size(cache, version);
        ByteBuffer buf = ByteBuffer.allocate(size);
        msg.write(new ByteBufferAccessor(buf), cache, version);
        if (buf.hasRemaining()) {
            throw new IllegalStateException("size() said " + size + " bytes but write() produced " + buf.position());
        }
        return HEX.formatHex(buf.array());
    }

    static JsonNode decode(Schema s, short version, String hex) throws Throwable {
        ByteBuffer buf = ByteBuffer.wrap(HEX.parseHex(hex));
        Message msg;
        try {
            msg = (Message) s.reader.newInstance(new ByteBufferAccessor(buf), version);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
        if (buf.hasRemaining()) {
            throw new TrailingBytes(buf.remaining(), buf.remaining() + " trailing bytes after "
                    + s.cls.getSimpleName() + " v" + version + " (read " + buf.position() + ")");
        }
        JsonNode json = (JsonNode) call(s.toJson, null, msg, version);
        putRecords(msg, json, s.records);
        return json;
    }

    /** Replaces the converter's "" for each records field with base64 of the real bytes. */
    static void putRecords(Object obj, JsonNode json, List<Step> plan) throws Throwable {
        if (obj == null || !(json instanceof ObjectNode node)) return;
        for (Step st : plan) {
            JsonNode child = node.get(st.key);
            if (child == null) continue; // field not present at this version
            Object value = call(st.getter, obj);
            switch (st.kind) {
                case RECORDS -> node.put(st.key, value == null ? null : Base64.getEncoder().encodeToString(RECORDS.bytes(value)));
                case STRUCT -> putRecords(value, child, st.below);
                case ARRAY -> {
                    if (value == null || !child.isArray()) continue;
                    // The converter writes elements in iteration order, so the two walks line up.
                    Iterator<?> it = ((Collection<?>) value).iterator();
                    for (JsonNode el : child) putRecords(it.next(), el, st.below);
                }
            }
        }
    }


    /** The Kafka release on the class path, from the version file in kafka-clients' jar. */
    static String kafkaVersion() throws IOException {
        try (InputStream in = Oracle.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in == null) throw new IllegalStateException("kafka-clients has no kafka-version.properties");
            Properties props = new Properties();
            props.load(in);
            return props.getProperty("version");
        }
    }

    // ---- reflective lookups (cached) ----

    static Schema schema(String name) throws ReflectiveOperationException {
        Schema s = SCHEMAS.get(name);
        if (s == null) {
            s = resolve(name);
            SCHEMAS.put(name, s);
        }
        return s;
    }

    /** Request/response/header schemas map to {@code <Name>Data}, data schemas to {@code <Name>}. */
    static Schema resolve(String name) throws ReflectiveOperationException {
        if (!name.matches("[A-Za-z][A-Za-z0-9]*")) throw new UnknownSchema("bad schema name: " + name);
        for (String candidate : List.of(name + "Data", name)) {
            Class<?> cls;
            Class<?> conv;
            try {
                cls = Class.forName(PKG + candidate);
                conv = Class.forName(PKG + candidate + "JsonConverter");
            } catch (ClassNotFoundException e) {
                continue;
            }
            if (!Message.class.isAssignableFrom(cls)) continue;
            Message blank = (Message) cls.getConstructor().newInstance();
            return new Schema(cls, cls.getConstructor(Readable.class, short.class),
                    conv.getMethod("read", JsonNode.class, short.class), conv.getMethod("write", cls, short.class),
                    blank.lowestSupportedVersion(), blank.highestSupportedVersion(), plan(cls));
        }
        throw new UnknownSchema("no Kafka message class for schema " + name);
    }

    /** Finds the paths to every BaseRecords field below {@code cls}; empty when there are none. */
    static List<Step> plan(Class<?> cls) throws NoSuchMethodException {
        List<Step> known = PLANS.get(cls);
        if (known != null) return known;
        PLANS.put(cls, List.of()); // guard against a struct that (indirectly) contains itself
        List<Step> steps = new ArrayList<>();
        for (Field f : cls.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) || f.getName().startsWith("_")) continue;
            Class<?> t = f.getType();
            if (RECORDS.isRecords(t)) {
                steps.add(new Step(f.getName(), cls.getMethod(f.getName()), Kind.RECORDS, List.of()));
            } else if (Message.class.isAssignableFrom(t)) {
                List<Step> below = plan(t);
                if (!below.isEmpty()) steps.add(new Step(f.getName(), cls.getMethod(f.getName()), Kind.STRUCT, below));
            } else if (Collection.class.isAssignableFrom(t)) {
                Class<?> el = elementClass(f.getGenericType());
                if (el == null || !Message.class.isAssignableFrom(el)) continue;
                List<Step> below = plan(el);
                if (!below.isEmpty()) steps.add(new Step(f.getName(), cls.getMethod(f.getName()), Kind.ARRAY, below));
            }
        }
        List<Step> result = List.copyOf(steps);
        PLANS.put(cls, result);
        return result;
    }

    /** Element class of {@code List<X>} or of a generated {@code XCollection extends ...<X>}. */
    static Class<?> elementClass(Type t) {
        while (t != null) {
            if (t instanceof ParameterizedType p) {
                Type arg = p.getActualTypeArguments()[0];
                return arg instanceof Class<?> c ? c : null;
            }
            t = t instanceof Class<?> c ? c.getGenericSuperclass() : null;
        }
        return null;
    }

    // ---- small helpers ----

    /** Invokes {@code m} on {@code target} (null for static), reporting Kafka's own exception. */
    static Object call(Method m, Object target, Object... args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    static JsonNode need(JsonNode req, String key) {
        JsonNode v = req.get(key);
        if (v == null || v.isNull()) throw new BadRequest("missing \"" + key + "\"");
        return v;
    }

    static String text(JsonNode req, String key) {
        JsonNode v = need(req, key);
        if (!v.isTextual()) throw new BadRequest("\"" + key + "\" must be a string");
        return v.textValue();
    }

    static short version(JsonNode req, Schema s) {
        JsonNode v = need(req, "version");
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() < Short.MIN_VALUE || v.intValue() > Short.MAX_VALUE) {
            throw new BadRequest("\"version\" must be a 16-bit integer");
        }
        short version = (short) v.intValue();
        if (version < s.lowest || version > s.highest) {
            throw new org.apache.kafka.common.errors.UnsupportedVersionException(s.cls.getSimpleName() + " v" + version
                    + " is outside its valid versions " + s.lowest + "-" + s.highest);
        }
        return version;
    }

    /** Builds an error reply; falls back to a fixed line if even that fails. */
    static String errorLine(JsonNode id, Throwable t) {
        try {
            ObjectNode reply = MAPPER.createObjectNode();
            if (id != null) reply.set("id", id);
            reply.put("ok", false);
            reply.put("kind", t.getClass().getSimpleName());
            reply.put("error", t.getMessage() != null ? t.getMessage() : t.toString());
            if (t instanceof TrailingBytes tb) reply.put("trailing", tb.count);
            return MAPPER.writeValueAsString(reply);
        } catch (Throwable again) {
            return "{\"ok\":false,\"kind\":\"OracleFailure\",\"error\":\"could not report an error\"}";
        }
    }
}
