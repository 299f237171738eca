package ferry;

import static ferry.JsonLines.emit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The fault checker's producers (tests/faults/check.py): each one a KafkaProducer with the client's defaults
 * (idempotent, acks=all), writing the values "&lt;producer&gt;-&lt;seq&gt;" round-robin over the partitions at a
 * steady rate until stdin closes, then closing within the given time. It prints one JSON line per answer:
 *
 * <pre>
 * {"check": "acked", "producer": 0, "seq": 17, "partition": 5, "offset": 2}
 * {"check": "failed", "producer": 0, "seq": 18, "error": "..."}
 * {"check": "done", "producer": 0, "sent": 19}
 * </pre>
 *
 * <pre>
 * java -cp CLASSES:DEPS ferry.NumberedProducers --bootstrap HOST:PORT,... --topic T --partitions N
 *     --producers P --rate RECORDS_PER_SECOND --close-timeout SECONDS [--config FILE]
 * </pre>
 *
 * <p>--config names a .properties file whose settings are added to every producer's (and win over its own),
 * such as security.protocol and sasl.jaas.config for a cluster whose listeners want TLS and a login.
 */
public final class NumberedProducers {
    private NumberedProducers() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String topic = null;
        int partitions = 0;
        int producers = 0;
        double rate = 0;
        long closeTimeoutSeconds = 0;
        Properties extra = new Properties();
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--bootstrap": bootstrap = args[i + 1]; break;
                case "--topic": topic = args[i + 1]; break;
                case "--partitions": partitions = Integer.parseInt(args[i + 1]); break;
                case "--producers": producers = Integer.parseInt(args[i + 1]); break;
                case "--rate": rate = Double.parseDouble(args[i + 1]); break;
                case "--close-timeout": closeTimeoutSeconds = Long.parseLong(args[i + 1]); break;
                case "--config":
                    try (Reader file = Files.newBufferedReader(Paths.get(args[i + 1]), StandardCharsets.UTF_8)) {
                        extra.load(file);
                    }
                    break;
                default: throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (bootstrap == null || topic == null || partitions <= 0 || producers <= 0 || rate <= 0
                || closeTimeoutSeconds <= 0) {
            throw new IllegalArgumentException("--bootstrap, --topic, --partitions, --producers, --rate and "
                    + "--close-timeout are required");
        }
        CountDownLatch stop = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int index = 0; index < producers; index++) {
            Writer writer = new Writer(index, bootstrap, topic, partitions, rate, Duration.ofSeconds(closeTimeoutSeconds),
                    extra);
            Thread thread = new Thread(() -> writer.run(stop), "producer-" + index);
            thread.setDaemon(true);  // should a later producer fail to start, the JVM still exits
            thread.start();
            threads.add(thread);
        }
        // The checker closes stdin to stop the producers.
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            while (in.readLine() != null) {
                // nothing to read: only the end of the stream matters
            }
        } catch (IOException e) {
            emit("stdin", "error", e.toString());
        }
        stop.countDown();
        for (Thread thread : threads) thread.join();
    }

    /** One producer and its numbered records. */
    private static final class Writer {
        private final int index;
        private final String topic;
        private final int partitions;
        private final long intervalNanos;
        private final Duration closeTimeout;
        private final KafkaProducer<byte[], byte[]> producer;

        Writer(int index, String bootstrap, String topic, int partitions, double rate, Duration closeTimeout,
                Properties extra) {
            this.index = index;
            this.topic = topic;
            this.partitions = partitions;
            this.intervalNanos = (long) (TimeUnit.SECONDS.toNanos(1) / rate);
            this.closeTimeout = closeTimeout;
            Properties props = new Properties();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(ProducerConfig.CLIENT_ID_CONFIG, "faults-producer-" + index);
            props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
            props.put(ProducerConfig.METADATA_MAX_AGE_CONFIG, 5000);
            props.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 50);
            props.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
            props.putAll(extra);
            this.producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
        }

        void run(CountDownLatch stop) {
            long seq = 0;
            long nextSend = System.nanoTime();
            try {
                while (!stop.await(Math.max(0, nextSend - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    send(seq);
                    seq++;
                    // After send() blocked (a full buffer while no leader answers), go on at the rate instead of
                    // sending all that was missed at once.
                    nextSend = Math.max(nextSend + intervalNanos, System.nanoTime() - intervalNanos);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                emit("fatal", "producer", index, "error", e.toString());
            }
            // Records still unanswered when the time is up fail with the close, so every record is reported.
            producer.close(closeTimeout);
            emit("done", "producer", index, "sent", seq);
        }

        private void send(long seq) {
            byte[] value = (index + "-" + seq).getBytes(StandardCharsets.US_ASCII);
            int partition = (int) (seq % partitions);
            producer.send(new ProducerRecord<>(topic, partition, null, value), (metadata, error) -> {
                if (error == null) {
                    emit("acked", "producer", index, "seq", seq, "partition", metadata.partition(),
                            "offset", metadata.offset());
                } else {
                    emit("failed", "producer", index, "seq", seq, "error", error.toString());
                }
            });
        }
    }
}
