// Lists the configs that Kafka itself types as secrets (ConfigDef.Type.PASSWORD), for
// schemas/password-configs.tsv. Run in Java's single-file source mode with the jars of
// tools/password-configs/pom.xml on the class path (tools/password-configs/run.sh does it).
//
// Rather than a hand-kept list of classes, it looks at every class of the Kafka and Connect
// jars on the class path and reads each ConfigDef the class holds statically: static fields of
// type ConfigDef and static methods without parameters that return one (ProducerConfig's
// `configDef()`, KafkaConfig's, LogConfig's, StreamsConfig's, Connect's worker configs...).
// A class is initialised only if it has such a member. Output, sorted: one config name a line,
// a tab, and the classes whose ConfigDefs have it as a PASSWORD, comma-separated.
//
//   java -cp 'lib/*' PasswordConfigs.java          # the PASSWORD configs
//   java -cp 'lib/*' PasswordConfigs.java --all    # every config: name, type, classes

import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

public class PasswordConfigs {
    public static void main(String[] args) throws Exception {
        boolean all = args.length > 0 && args[0].equals("--all");
        Class<?> configDef = Class.forName("org.apache.kafka.common.config.ConfigDef");
        Method configKeys = configDef.getMethod("configKeys");
        Class<?> configKey = Class.forName("org.apache.kafka.common.config.ConfigDef$ConfigKey");
        Field typeField = configKey.getField("type");

        // name -> type -> classes
        Map<String, Map<String, Set<String>>> found = new TreeMap<>();
        int defs = 0;
        for (String className : kafkaClasses()) {
            Class<?> c;
            try {
                c = Class.forName(className, false, PasswordConfigs.class.getClassLoader());
            } catch (Throwable e) {
                continue;
            }
            List<Object> instances = new ArrayList<>();
            try {
                for (Field f : c.getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers()) && configDef.isAssignableFrom(f.getType())) {
                        f.setAccessible(true);
                        instances.add(f.get(null));
                    }
                }
                for (Method m : c.getDeclaredMethods()) {
                    if (Modifier.isStatic(m.getModifiers()) && m.getParameterCount() == 0
                            && configDef.isAssignableFrom(m.getReturnType())) {
                        m.setAccessible(true);
                        instances.add(m.invoke(null));
                    }
                }
            } catch (Throwable e) {
                // A class that cannot be initialised here (an optional dependency missing)
                // holds no ConfigDef we can read; say so, so a gap is visible.
                System.err.println("skipped " + className + ": " + e);
                continue;
            }
            for (Object def : instances) {
                if (def == null) {
                    continue;
                }
                defs++;
                @SuppressWarnings("unchecked")
                Map<String, Object> keys = (Map<String, Object>) configKeys.invoke(def);
                for (Map.Entry<String, Object> e : keys.entrySet()) {
                    String type = String.valueOf(typeField.get(e.getValue()));
                    found.computeIfAbsent(e.getKey(), k -> new TreeMap<>())
                            .computeIfAbsent(type, k -> new TreeSet<>())
                            .add(className);
                }
            }
        }
        if (defs == 0) {
            throw new IllegalStateException("no ConfigDef found: is the class path right?");
        }
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Map<String, Set<String>>> e : found.entrySet()) {
            for (Map.Entry<String, Set<String>> t : e.getValue().entrySet()) {
                if (all) {
                    out.append(e.getKey()).append('\t').append(t.getKey()).append('\t')
                            .append(String.join(",", t.getValue())).append('\n');
                } else if (t.getKey().equals("PASSWORD")) {
                    out.append(e.getKey()).append('\t')
                            .append(String.join(",", t.getValue())).append('\n');
                }
            }
        }
        System.out.print(out);
        System.out.flush();
        // Some static initialisers start threads; do not wait for them.
        System.exit(0);
    }

    /** Every class of the Kafka and Connect jars on the class path, sorted. */
    private static Set<String> kafkaClasses() throws Exception {
        Set<String> classes = new TreeSet<>();
        for (String path : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = new File(path).getName();
            boolean kafka = name.startsWith("kafka") || name.startsWith("connect-");
            if (!kafka || !name.endsWith(".jar") || name.contains("-test")) {
                continue;
            }
            try (JarFile jar = new JarFile(path)) {
                Enumeration<JarEntry> entries = jar.entries();
                while (entries.hasMoreElements()) {
                    String entry = entries.nextElement().getName();
                    if (entry.endsWith(".class") && !entry.contains("module-info")) {
                        classes.add(entry.substring(0, entry.length() - 6).replace('/', '.'));
                    }
                }
            }
        }
        return classes;
    }
}
