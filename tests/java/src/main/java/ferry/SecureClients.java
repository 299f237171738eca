package ferry;

import static ferry.JsonLines.emit;

import java.io.FileInputStream;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java client over each secure listener (tests/integration/test_security_clients.py): per case, a
 * transactional producer commits, aborts and commits again, then a consumer in a group with
 * isolation.level=read_committed reads the topic and commits its offsets.
 *
 * <pre>
 * java -cp CLASSES:DEPS ferry.SecureClients CASE.properties...
 * </pre>
 *
 * Each properties file holds the client's own settings (bootstrap.servers, security.protocol, sasl.*, ssl.*)
 * and the case's, under ferry.: ferry.case (its name), ferry.topic, ferry.partitions, ferry.transactional.id,
 * ferry.group, ferry.committed.per.txn (records in each of the two committed transactions), ferry.aborted
 * (records in the aborted one, which comes between them) and ferry.timeout.ms. Record i of a transaction goes
 * to partition i mod ferry.partitions, so every transaction touches every partition. The cases run at once,
 * one thread each; each prints one JSON line {"check": "case", "case": NAME, "ok": ..., "consumed": [...]}
 * and the program exits 1 if any failed.
 */
public final class SecureClients {
    private SecureClients() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: SecureClients CASE.properties...");
            System.exit(2);
        }
        emit("start", "client_version", JavaClients.clientVersion(), "java_version",
             System.getProperty("java.version"));
        List<Thread> threads = new ArrayList<>();
        boolean[] failed = {false};
        for (String path : args) {
            Properties props = new Properties();
            try (InputStream in = new FileInputStream(path)) {
                props.load(in);
            }
            Thread t = new Thread(() -> {
                if (!runCase(props)) {
                    synchronized (failed) {
                        failed[0] = true;
                    }
                }
            }, props.getProperty("ferry.case"));
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) t.join();
        emit("done", "ok", !failed[0]);
        System.exit(failed[0] ? 1 : 0);
    }

    /** The client settings of a case: everything but the ferry.* keys. */
    private static Properties clientSettings(Properties all) {
        Properties out = new Properties();
        for (String key : all.stringPropertyNames()) {
            if (!key.startsWith("ferry.")) out.setProperty(key, all.getProperty(key));
        }
        return out;
    }

    private static boolean runCase(Properties all) {
        String name = all.getProperty("ferry.case");
        String topic = all.getProperty("ferry.topic");
        int partitions = Integer.parseInt(all.getProperty("ferry.partitions"));
        int perTxn = Integer.parseInt(all.getProperty("ferry.committed.per.txn"));
        int aborted = Integer.parseInt(all.getProperty("ferry.aborted"));
        long timeoutMs = Long.parseLong(all.getProperty("ferry.timeout.ms", "60000"));
        long started = System.nanoTime();
        long deadline = started + timeoutMs * 1_000_000L;
        String stage = "produce";
        List<String> consumed = new ArrayList<>();
        Map<Integer, Long> committedOffsets = new TreeMap<>();
        int sentCommitted = 0;
        int sentAborted = 0;
        try {
            Properties p = clientSettings(all);
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, all.getProperty("ferry.transactional.id"));
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "30000");
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(timeoutMs));
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(timeoutMs));
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "20000");
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
                producer.initTransactions();
                // committed, aborted, committed: the aborted records lie between committed ones in every partition.
                int next = 0;
                for (int txn = 0; txn < 3; txn++) {
                    boolean commit = txn != 1;
                    producer.beginTransaction();
                    int count = commit ? perTxn : aborted;
                    for (int i = 0; i < count; i++) {
                        String value = commit ? "c-" + (next + i) : "a-" + i;
                        producer.send(new ProducerRecord<>(topic, i % partitions, null, value));
                    }
                    producer.flush();
                    if (commit) {
                        producer.commitTransaction();
                        next += count;
                        sentCommitted += count;
                    } else {
                        producer.abortTransaction();
                        sentAborted += count;
                    }
                }
            }
            stage = "consume";
            int expected = sentCommitted;
            Properties c = clientSettings(all);
            c.put(ConsumerConfig.GROUP_ID_CONFIG, all.getProperty("ferry.group"));
            c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c);
            try {
                consumer.subscribe(List.of(topic));
                while (consumed.size() < expected && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        consumed.add(r.value());
                    }
                }
                stage = "commit";
                consumer.commitSync(Duration.ofSeconds(30));
                Set<TopicPartition> tps = new HashSet<>();
                for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e :
                         consumer.committed(tps, Duration.ofSeconds(30)).entrySet()) {
                    committedOffsets.put(e.getKey().partition(), e.getValue() == null ? -1 : e.getValue().offset());
                }
            } finally {
                consumer.close(Duration.ofSeconds(10));
            }
            emit("case", "case", name, "ok", true, "sent_committed", sentCommitted, "sent_aborted", sentAborted,
                 "consumed", consumed, "committed_offsets", committedOffsets, "elapsed_ms",
                 (System.nanoTime() - started) / 1_000_000);
            return true;
        } catch (Exception e) {
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            System.err.println("case " + name + " failed in " + stage + ":\n" + trace);
            emit("case", "case", name, "ok", false, "stage", stage, "error", e.toString(), "sent_committed",
                 sentCommitted, "sent_aborted", sentAborted, "consumed", consumed, "committed_offsets",
                 committedOffsets, "elapsed_ms", (System.nanoTime() - started) / 1_000_000);
            return false;
        }
    }
}
