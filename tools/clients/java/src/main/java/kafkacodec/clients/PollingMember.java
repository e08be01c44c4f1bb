package kafkacodec.clients;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * A group member polling on a thread of its own (ClusterClients' KIP-848 consumers,
 * ClusterShareGroups' share consumers): what failed there is kept for the main thread, whose
 * waits raise it, and the checks those programs share (a failed one throws, naming what).
 */
abstract class PollingMember implements Runnable {
    /** How long a wait may take before the program fails: a hang guard, not a measurement. */
    static final Duration GUARD = Duration.ofSeconds(40);

    final String name;
    final AtomicReference<Throwable> failure = new AtomicReference<>();

    PollingMember(String name) {
        this.name = name;
    }

    /** Until `condition` holds; fails at the guard, or with the first of `members` to fail. */
    static void waitFor(String what, BooleanSupplier condition, PollingMember... members) throws Exception {
        long deadline = System.nanoTime() + GUARD.toNanos();
        while (!condition.getAsBoolean()) {
            for (PollingMember member : members) {
                if (member.failure.get() != null) {
                    throw new IllegalStateException(member.name + " failed while waiting for: " + what,
                            member.failure.get());
                }
            }
            check(System.nanoTime() < deadline, "not within " + GUARD.toSeconds() + " s: " + what);
            Thread.sleep(20);
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what);
        }
    }
}
