package ferry;

import static ferry.JsonLines.emit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One member of a consumer group for tests/integration/group_members.py: a KafkaConsumer subscribed to one topic,
 * committing synchronously after each poll that returned records, until stdin closes (then it closes the consumer,
 * which leaves the group unless it is a static member). It prints one JSON line per event:
 *
 * <pre>
 * {"check": "assigned", "partitions": [0, 3]}          after every rebalance callback: the whole assignment
 * {"check": "record", "topic": "t", "partition": 3, "offset": 17, "value": "..."}
 * {"check": "commit_refused", "error": "..."}        a commit refused during a rebalance (it retries next poll)
 * {"check": "error", "error": "..."}
 * {"check": "closed"}
 * </pre>
 *
 * <pre>
 * java -cp CLASSES:DEPS ferry.GroupMember --bootstrap HOST:PORT,... --topic T|--topic-pattern REGEX --group G
 *     --assignor range|cooperative-sticky [--instance-id ID] [--session-timeout-ms MS] [--group-protocol classic|consumer]
 * </pre>
 *
 * With {@code --group-protocol consumer} (KIP-848) the broker assigns: {@code --assignor} names its server
 * assignor (uniform or range), and the session timeout is the broker's, so {@code --session-timeout-ms} is not
 * sent. {@code --topic-pattern} subscribes with a {@code SubscriptionPattern} (kafka-clients 4.0 and later, the
 * consumer protocol only), a regular expression the broker resolves against every topic, including topics created
 * later.
 */
public final class GroupMember {
    private GroupMember() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String topic = null;
        String topicPattern = null;
        String group = null;
        String assignor = "range";
        String instanceId = null;
        int sessionTimeoutMs = 6000;
        String groupProtocol = "classic";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--bootstrap": bootstrap = args[i + 1]; break;
                case "--topic": topic = args[i + 1]; break;
                case "--topic-pattern": topicPattern = args[i + 1]; break;
                case "--group": group = args[i + 1]; break;
                case "--assignor": assignor = args[i + 1]; break;
                case "--instance-id": instanceId = args[i + 1]; break;
                case "--session-timeout-ms": sessionTimeoutMs = Integer.parseInt(args[i + 1]); break;
                case "--group-protocol": groupProtocol = args[i + 1]; break;
                default: throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (bootstrap == null || (topic == null) == (topicPattern == null) || group == null) {
            throw new IllegalArgumentException("--bootstrap, --group and one of --topic and --topic-pattern are required");
        }
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        if (groupProtocol.equals("consumer")) {
            props.put("group.protocol", "consumer");  // by name: older clients this compiles against lack the constant
            props.put("group.remote.assignor", assignor);
        } else {
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, sessionTimeoutMs);
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
            props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignorClass(assignor));
        }
        if (instanceId != null) props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instanceId);

        AtomicBoolean stopping = new AtomicBoolean(false);
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                while (in.readLine() != null) {
                    // only the end of the stream matters
                }
            } catch (IOException e) {
                emit("error", "error", e.toString());
            }
            stopping.set(true);
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();

        try (KafkaConsumer<byte[], byte[]> consumer =
                     new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    report(consumer, partitions, false);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    report(consumer, partitions, true);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    report(consumer, partitions, false);
                }
            };
            if (topicPattern != null) {
                subscribeToPattern(consumer, topicPattern, listener);
            } else {
                consumer.subscribe(List.of(topic), listener);
            }
            while (!stopping.get()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    emit("record", "topic", r.topic(), "partition", r.partition(), "offset", r.offset(),
                            "value", r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                }
                if (!records.isEmpty()) commit(consumer);
            }
        } catch (RuntimeException e) {
            emit("error", "error", e.toString());
        }
        emit("closed");
    }

    // As applications do: a commit refused because a rebalance is under way (or passed this member by) is left to
    // the next poll's commit; the records it covered may be read again by whoever gets their partitions.
    private static void commit(KafkaConsumer<byte[], byte[]> consumer) {
        try {
            consumer.commitSync();
        } catch (RebalanceInProgressException | CommitFailedException e) {
            emit("commit_refused", "error", e.toString());
        }
    }

    // SubscriptionPattern is new in kafka-clients 4.0, and this source also builds against 3.9: found at run time.
    private static void subscribeToPattern(KafkaConsumer<byte[], byte[]> consumer, String regex,
                                           ConsumerRebalanceListener listener) throws ReflectiveOperationException {
        Class<?> patternClass = Class.forName("org.apache.kafka.clients.consumer.SubscriptionPattern");
        Object pattern = patternClass.getConstructor(String.class).newInstance(regex);
        KafkaConsumer.class.getMethod("subscribe", patternClass, ConsumerRebalanceListener.class)
                .invoke(consumer, pattern, listener);
    }

    private static String assignorClass(String name) {
        switch (name) {
            case "range": return "org.apache.kafka.clients.consumer.RangeAssignor";
            case "roundrobin": return "org.apache.kafka.clients.consumer.RoundRobinAssignor";
            case "cooperative-sticky": return "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
            default: throw new IllegalArgumentException("unknown assignor " + name);
        }
    }

    // The whole assignment after a callback: the callbacks of a cooperative rebalance name only what changed, and
    // while revoking, assignment() still holds what is going away.
    private static void report(KafkaConsumer<byte[], byte[]> consumer, Collection<TopicPartition> changed,
                               boolean added) {
        List<Integer> partitions = new ArrayList<>();
        for (TopicPartition tp : consumer.assignment()) {
            if (added || !changed.contains(tp)) partitions.add(tp.partition());
        }
        partitions.sort(null);
        emit("assigned", "partitions", partitions);
    }
}
