package kafkacodec.clients;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;

/**
 * Delegation tokens (KIP-48) as the Java AdminClient uses them (cluster/tests/java_tokens.rs
 * runs it against a real Kafka 4.4 broker and against the cluster, and compares the lines
 * printed): a PLAIN user creates a token with a renewer and a one-hour maximum, describes it
 * (every owner, then an owner that is not its), renews it for a minute, then logs in with it
 * (SCRAM-SHA-512, the token id as user, the HMAC in base64 as password, tokenauth=true),
 * lists the topics and asks for tokens over that login; then expires it at once and
 * describes, renews and logs in with it again. Timestamps are printed as differences, so the
 * lines do not depend on the clock.
 *
 * <p>Usage: DelegationTokens BOOTSTRAP USER PASSWORD
 */
public final class DelegationTokens {
    private static final long TIMEOUT_S = 20;

    private DelegationTokens() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: DelegationTokens BOOTSTRAP USER PASSWORD");
            System.exit(2);
        }
        String bootstrap = args[0];
        String user = args[1];
        Properties plain = props(bootstrap, "PLAIN", "org.apache.kafka.common.security.plain"
                + ".PlainLoginModule required username=\"" + user + "\" password=\"" + args[2]
                + "\";");
        List<String> lines = new ArrayList<>();
        try (Admin admin = Admin.create(plain)) {
            KafkaPrincipal renewer = new KafkaPrincipal("User", "kafka-codec-renewer");
            DelegationToken token = get(admin.createDelegationToken(
                    new CreateDelegationTokenOptions().renewers(List.of(renewer))
                            .maxLifetimeMs(3_600_000)).delegationToken());
            TokenInformation info = token.tokenInfo();
            String id = info.tokenId();
            print(lines, "created owner=" + info.ownerAsString() + " requester="
                    + info.tokenRequesterAsString() + " renewers=" + info.renewersAsString()
                    + " expiry-issue=" + (info.expiryTimestamp() - info.issueTimestamp())
                    + " max-issue=" + (info.maxTimestamp() - info.issueTimestamp())
                    + " hmac-bytes=" + token.hmac().length + " id-chars=" + id.length());
            // A broker learns of the token from the metadata log, a moment after it answers
            // the creation: wait until it lists it, as a client that uses it at once must.
            for (int i = 0; i < 100 && describe(admin, null, token).endsWith("=0"); i++) {
                Thread.sleep(100);
            }
            print(lines, "described " + describe(admin, null, token));
            print(lines, "described for User:nobody "
                    + describe(admin, List.of(new KafkaPrincipal("User", "nobody")), token));
            print(lines, "described for the renewer " + describe(admin, List.of(renewer), token));
            long before = System.currentTimeMillis();
            KafkaFuture<Long> renewed = admin.renewDelegationToken(token.hmac(),
                    new RenewDelegationTokenOptions().renewTimePeriodMs(60_000)).expiryTimestamp();
            String outcome = outcome(renewed);
            long after = System.currentTimeMillis();
            if (outcome.equals("ok")) {
                long expiry = get(renewed);
                outcome += " for a minute: "
                        + (expiry >= before + 60_000 && expiry <= after + 60_000);
            }
            print(lines, "renewed: " + outcome);

            Properties withToken = props(bootstrap, "SCRAM-SHA-512",
                    "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
                            + id + "\" password=\"" + token.hmacAsBase64String()
                            + "\" tokenauth=\"true\";");
            try (Admin tokenAdmin = Admin.create(withToken)) {
                print(lines, "token login lists topics: " + outcome(tokenAdmin.listTopics().names()));
                print(lines, "token login creates a token: "
                        + outcome(tokenAdmin.createDelegationToken().delegationToken()));
                print(lines, "token login describes tokens: "
                        + outcome(tokenAdmin.describeDelegationToken().delegationTokens()));
            }

            print(lines, "expired at once: " + outcome(admin.expireDelegationToken(token.hmac(),
                    new ExpireDelegationTokenOptions().expiryTimePeriodMs(-1)).expiryTimestamp()));
            print(lines, "described after expiry " + describe(admin, null, token));
            print(lines, "renewed after expiry: " + outcome(admin.renewDelegationToken(token.hmac())
                    .expiryTimestamp()));
            try (Admin tokenAdmin = Admin.create(withToken)) {
                print(lines, "token login after expiry lists topics: "
                        + outcome(tokenAdmin.listTopics().names()));
            }
        }
    }

    /** Prints `line` at once (so a failure shows how far the run came) and keeps it. */
    private static void print(List<String> lines, String line) {
        System.out.println(line);
        lines.add(line);
    }

    private static Properties props(String bootstrap, String mechanism, String jaas) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put("security.protocol", "SASL_PLAINTEXT");
        props.put("sasl.mechanism", mechanism);
        props.put("sasl.jaas.config", jaas);
        // A refused login fails the call rather than being retried until the timeout.
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        return props;
    }

    /** Whether the described tokens hold `token` (with its HMAC and renewers), and how many. */
    private static String describe(Admin admin, List<KafkaPrincipal> owners,
            DelegationToken token) throws Exception {
        DescribeDelegationTokenOptions options = new DescribeDelegationTokenOptions();
        if (owners != null) {
            options.owners(owners);
        }
        List<DelegationToken> tokens = get(admin.describeDelegationToken(options)
                .delegationTokens());
        long same = tokens.stream().filter(t -> t.equals(token)).count();
        return "holds-it=" + same;
    }

    private static <T> T get(KafkaFuture<T> future) throws Exception {
        return future.get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    /** "ok", or the class of the exception the call failed with. */
    private static String outcome(KafkaFuture<?> future) throws Exception {
        try {
            future.get(TIMEOUT_S, TimeUnit.SECONDS);
            return "ok";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        }
    }
}
