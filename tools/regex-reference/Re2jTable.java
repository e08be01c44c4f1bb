// Reads SubscribedTopicRegex patterns (one a line after a line of topic names, from stdin) and prints, for each, what
// Kafka's group coordinator does with it: the INVALID_REGULAR_EXPRESSION message of
// `Utils.throwIfRegularExpressionIsInvalid`, or the topic names (from the first stdin line,
// space-separated) that RE2J's `Matcher.matches` resolves it to, as `TopicRegexResolver`.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

public class Re2jTable {
    public static void main(String[] args) throws Exception {
        Class<?> utils = Class.forName("org.apache.kafka.coordinator.group.Utils");
        Method check = utils.getDeclaredMethod("throwIfRegularExpressionIsInvalid", String.class);
        check.setAccessible(true);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String[] topics = in.readLine().trim().split(" ");
        System.out.println(String.join(" ", topics));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String outcome;
            try {
                check.invoke(null, line);
                com.google.re2j.Pattern p = com.google.re2j.Pattern.compile(line);
                List<String> matched = new ArrayList<>();
                for (String t : topics) if (p.matcher(t).matches()) matched.add(t);
                outcome = "ok\t" + String.join(" ", matched);
            } catch (InvocationTargetException e) {
                outcome = "invalid\t" + e.getCause().getMessage();
            }
            System.out.println(line + "\t" + outcome);
        }
    }
}
