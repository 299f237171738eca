package ferry;

import static ferry.JsonLines.emit;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.LogTruncationException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * KIP-320: a consumer given a position with the leader epoch it was read in checks it with OffsetForLeaderEpoch
 * before fetching. A position inside the epoch is kept; one past where the epoch ended in the leader's log means
 * the log was truncated under it, and with auto.offset.reset=none the client raises LogTruncationException naming
 * where the epoch ended. Without the API the client fetches blindly and gets OFFSET_OUT_OF_RANGE instead.
 */
final class PositionValidation {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int RECORDS = 10;

    private PositionValidation() {}

    static void run(String bootstrap, String prefix) throws Exception {
        String topic = prefix + "-validation";
        TopicPartition tp = new TopicPartition(topic, 0);
        Properties adminProps = new Properties();
        adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3))).all().get(60, TimeUnit.SECONDS);
        }
        Properties producerProps = new Properties();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < RECORDS; i++) producer.send(new ProducerRecord<>(topic, 0, "k", "v-" + i)).get(60, TimeUnit.SECONDS);
        }

        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            ConsumerRecord<String, String> first = firstRecord(consumer);
            int epoch = first.leaderEpoch().orElse(-1);

            consumer.seek(tp, new OffsetAndMetadata(4, Optional.of(epoch), ""));
            long resumedAt = firstRecord(consumer).offset();

            consumer.seek(tp, new OffsetAndMetadata(RECORDS + 100, Optional.of(epoch), ""));
            String raised = null;
            Long divergentOffset = null;
            Integer divergentEpoch = null;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (raised == null && System.nanoTime() < deadline) {
                try {
                    consumer.poll(Duration.ofMillis(200));
                } catch (LogTruncationException e) {
                    raised = e.getClass().getSimpleName();
                    OffsetAndMetadata divergent = e.divergentOffsets().get(tp);
                    if (divergent != null) {
                        divergentOffset = divergent.offset();
                        divergentEpoch = divergent.leaderEpoch().orElse(-1);
                    }
                } catch (RuntimeException e) {
                    raised = e.getClass().getSimpleName();
                }
            }
            emit("position_validation", "records", RECORDS, "first_offset", first.offset(), "epoch", epoch,
                 "resumed_at", resumedAt, "raised", raised, "divergent_offset", divergentOffset,
                 "divergent_epoch", divergentEpoch);
        }
    }

    private static ConsumerRecord<String, String> firstRecord(KafkaConsumer<String, String> consumer) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            ConsumerRecords<String, String> got = consumer.poll(Duration.ofMillis(200));
            if (!got.isEmpty()) return got.iterator().next();
        }
        throw new IllegalStateException("no record within " + WAIT);
    }
}
