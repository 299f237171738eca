package ferry;

import static ferry.JsonLines.emit;
import static ferry.JsonLines.map;

import java.io.InputStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;

/**
 * Drives Ferry with the official Java client and prints what it saw as JSON lines on stdout, one line per
 * check ({"check": "produce", ...}); tests/integration/test_java_clients.py asserts on them.
 *
 * <pre>
 * java -cp CLASSES:DEPS ferry.JavaClients --bootstrap HOST:PORT,... --prefix NAME [--records N] [produce consume admin validate]
 * </pre>
 *
 * The sections run in order (consume reads what produce wrote). An exception that escapes a section is printed
 * with its stack trace on stderr and as an {"check": "error"} line; the other sections still run, and the
 * exit status is 1.
 */
public final class JavaClients {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int PARTITIONS = 6;
    private static final int MAX_EXAMPLES = 5;

    private final String bootstrap;
    private final String prefix;
    private final int records;
    private final String clientVersion = clientVersion();
    // What the producer was told for record i: partition and offset; partition -1 when the send failed.
    private int[] sentPartition;
    private long[] sentOffset;
    private final Map<Integer, Map<Long, Integer>> indexByPartitionOffset = new HashMap<>();

    private JavaClients(String bootstrap, String prefix, int records) {
        this.bootstrap = bootstrap;
        this.prefix = prefix;
        this.records = records;
    }

    public static void main(String[] args) {
        String bootstrap = null;
        String prefix = "java";
        int records = 10_000;
        List<String> sections = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bootstrap": bootstrap = args[++i]; break;
                case "--prefix": prefix = args[++i]; break;
                case "--records": records = Integer.parseInt(args[++i]); break;
                default: sections.add(args[i]);
            }
        }
        if (bootstrap == null) {
            System.err.println("usage: JavaClients --bootstrap HOST:PORT,... [--prefix NAME] [--records N] [produce consume admin validate]");
            System.exit(2);
        }
        if (sections.isEmpty()) sections = List.of("produce", "consume", "admin", "validate");
        JavaClients run = new JavaClients(bootstrap, prefix, records);
        emit("start", "client_version", run.clientVersion, "java_version", System.getProperty("java.version"),
             "sections", sections, "records", records);
        boolean failed = false;
        for (String section : sections) {
            long started = System.nanoTime();
            try {
                switch (section) {
                    case "produce": run.produce(); break;
                    case "consume": run.consume(); break;
                    case "admin": run.admin(); break;
                    case "validate": PositionValidation.run(run.bootstrap, run.prefix); break;
                    default: throw new IllegalArgumentException("no section " + section);
                }
                emit("section", "name", section, "ok", true, "elapsed_ms", millisSince(started));
            } catch (Throwable t) {
                failed = true;
                System.err.println("section " + section + " failed:");
                t.printStackTrace();
                emit("error", "section", section, "exception", t.getClass().getName(), "message", String.valueOf(t.getMessage()));
                emit("section", "name", section, "ok", false, "elapsed_ms", millisSince(started));
            }
        }
        emit("done", "ok", !failed);
        System.out.flush();
        System.exit(failed ? 1 : 0);
    }

    // ---------------------------------------------------------------------------------------------------------
    // 1. The producer with the Java defaults (idempotent, acks=all): keyed records with headers.

    static String key(int i) { return "key-" + i; }

    /** Mostly distinct sizes; every 1000th record is a tombstone (null value) and every 777th is empty. */
    static String value(int i) {
        if (i % 1000 == 999) return null;
        if (i % 777 == 1) return "";
        return "value-" + i + "-" + "x".repeat(i % 200);
    }

    List<Header> headers(int i) {
        List<Header> h = new ArrayList<>();
        h.add(new RecordHeader("index", Integer.toString(i).getBytes(StandardCharsets.UTF_8)));
        h.add(new RecordHeader("client", clientVersion.getBytes(StandardCharsets.UTF_8)));
        if (i % 3 == 0) h.add(new RecordHeader("index", new byte[] {(byte) i, 0, (byte) 0xff}));  // repeated key
        if (i % 7 == 0) h.add(new RecordHeader("nothing", null));
        if (i % 11 == 0) h.add(new RecordHeader("empty", new byte[0]));
        return h;
    }

    private long baseTimestamp;

    long timestamp(int i) { return baseTimestamp + 2L * i; }

    String recordsTopic() { return prefix + "-records"; }

    void produce() throws Exception {
        try (Admin admin = Admin.create(adminProps())) {
            admin.createTopics(List.of(new NewTopic(recordsTopic(), PARTITIONS, (short) 3))).all().get(60, TimeUnit.SECONDS);
        }
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());

        // Timestamps: a distinct, increasing one per record, an hour back (well inside retention).
        baseTimestamp = System.currentTimeMillis() - 3_600_000L;
        sentPartition = new int[records];
        sentOffset = new long[records];
        Arrays.fill(sentPartition, -1);
        long started = System.nanoTime();
        int acked = 0;
        int failed = 0;
        String firstError = null;
        int wrongPartition = 0;
        int wrongTimestamp = 0;
        List<String> examples = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>(records);
            for (int i = 0; i < records; i++)
                futures.add(producer.send(new ProducerRecord<>(recordsTopic(), null, timestamp(i), key(i), value(i), headers(i))));
            producer.flush();
            for (int i = 0; i < records; i++) {
                RecordMetadata md;
                try {
                    md = futures.get(i).get(60, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    failed++;
                    if (firstError == null) firstError = e.getCause().toString();
                    continue;
                }
                acked++;
                sentPartition[i] = md.partition();
                sentOffset[i] = md.offset();
                // The default partitioner puts a keyed record on murmur2(key) % partitions.
                int expected = Utils.toPositive(Utils.murmur2(key(i).getBytes(StandardCharsets.UTF_8))) % PARTITIONS;
                if (md.partition() != expected) {
                    wrongPartition++;
                    example(examples, "record " + i + " went to partition " + md.partition() + ", not " + expected);
                }
                if (md.timestamp() != timestamp(i)) {
                    wrongTimestamp++;
                    example(examples, "record " + i + " acknowledged with timestamp " + md.timestamp() + ", not " + timestamp(i));
                }
                Integer clash = indexByPartitionOffset.computeIfAbsent(md.partition(), p -> new HashMap<>()).put(md.offset(), i);
                if (clash != null) example(examples, "records " + clash + " and " + i + " both got " + md.partition() + "@" + md.offset());
            }
        }
        // Per partition: how many records, and whether their offsets are exactly 0..count-1 in send order.
        Map<String, Object> partitions = new TreeMap<>();
        for (int p = 0; p < PARTITIONS; p++) {
            long previous = -1;
            int inOrder = 0;
            int count = 0;
            long min = Long.MAX_VALUE;
            long max = -1;
            for (int i = 0; i < records; i++) {
                if (sentPartition[i] != p) continue;
                count++;
                if (sentOffset[i] == previous + 1) inOrder++;
                previous = sentOffset[i];
                min = Math.min(min, sentOffset[i]);
                max = Math.max(max, sentOffset[i]);
            }
            int distinct = indexByPartitionOffset.getOrDefault(p, Map.of()).size();
            partitions.put(Integer.toString(p), map("count", count, "distinct_offsets", distinct, "consecutive_in_send_order", inOrder,
                                                    "min_offset", count == 0 ? null : min, "max_offset", count == 0 ? null : max));
        }
        emit("produce", "topic", recordsTopic(), "partitions", PARTITIONS, "sent", records, "acked", acked, "failed", failed,
             "first_error", firstError, "wrong_partition", wrongPartition, "wrong_timestamp", wrongTimestamp,
             "per_partition", partitions, "examples", examples, "elapsed_ms", millisSince(started));
    }

    // ---------------------------------------------------------------------------------------------------------
    // 2. The consumer with assign + seek (no group): everything from the beginning, then from the middle;
    //    offsetsForTimes.

    /** Compares one consumed record with what was sent; returns null when it matches. */
    String compare(ConsumerRecord<String, String> r) {
        Integer i = indexByPartitionOffset.getOrDefault(r.partition(), Map.of()).get(r.offset());
        if (i == null) return "unexpected record at " + r.partition() + "@" + r.offset();
        if (!key(i).equals(r.key())) return r.partition() + "@" + r.offset() + ": key " + r.key() + ", sent " + key(i);
        if (!java.util.Objects.equals(value(i), r.value()))
            return r.partition() + "@" + r.offset() + ": value " + abbreviate(r.value()) + ", sent " + abbreviate(value(i));
        if (r.timestamp() != timestamp(i) || r.timestampType() != TimestampType.CREATE_TIME)
            return r.partition() + "@" + r.offset() + ": timestamp " + r.timestamp() + " " + r.timestampType() + ", sent " + timestamp(i);
        List<Header> want = headers(i);
        Header[] got = r.headers().toArray();
        if (got.length != want.size()) return r.partition() + "@" + r.offset() + ": " + got.length + " headers, sent " + want.size();
        for (int h = 0; h < got.length; h++) {
            if (!want.get(h).key().equals(got[h].key()) || !Arrays.equals(want.get(h).value(), got[h].value()))
                return r.partition() + "@" + r.offset() + ": header " + h + " is " + got[h] + ", sent " + want.get(h);
        }
        return null;
    }

    /** Polls until `wanted` records arrived (or a minute passed), checking each; returns the tally. */
    Map<String, Object> readAndCheck(KafkaConsumer<String, String> consumer, long wanted) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Map<Integer, Long> firstOffset = new TreeMap<>();
        Map<Integer, Long> lastOffset = new TreeMap<>();
        Set<Long> seen = new java.util.HashSet<>();
        long received = 0;
        int mismatched = 0;
        int duplicates = 0;
        int outOfOrder = 0;
        int polls = 0;
        List<String> examples = new ArrayList<>();
        while (received < wanted && System.nanoTime() < deadline) {
            polls++;
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                received++;
                firstOffset.putIfAbsent(r.partition(), r.offset());
                Long last = lastOffset.put(r.partition(), r.offset());
                if (last != null && r.offset() != last + 1) {
                    outOfOrder++;
                    example(examples, "partition " + r.partition() + ": offset " + r.offset() + " after " + last);
                }
                if (!seen.add(((long) r.partition() << 48) | r.offset())) duplicates++;
                String problem = compare(r);
                if (problem != null) {
                    mismatched++;
                    example(examples, problem);
                }
            }
        }
        // Anything beyond what was asked for would show up within a short extra poll.
        int extra = consumer.poll(Duration.ofMillis(200)).count();
        return map("received", received, "extra", extra, "mismatched", mismatched, "duplicates", duplicates,
                   "out_of_order", outOfOrder, "polls", polls, "first_offset", stringKeys(firstOffset),
                   "last_offset", stringKeys(lastOffset), "examples", examples);
    }

    void consume() throws Exception {
        if (sentPartition == null) throw new IllegalStateException("consume needs produce to run first");
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<PartitionInfo> infos = consumer.partitionsFor(recordsTopic(), WAIT);
            List<TopicPartition> all = new ArrayList<>();
            for (PartitionInfo info : infos) all.add(new TopicPartition(recordsTopic(), info.partition()));
            all.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
            consumer.assign(all);

            // Everything, from the beginning.
            long started = System.nanoTime();
            consumer.seekToBeginning(all);
            Map<String, Object> full = readAndCheck(consumer, countAcked());
            Map<String, Object> positions = new TreeMap<>();
            for (TopicPartition tp : all) positions.put(Integer.toString(tp.partition()), consumer.position(tp, WAIT));
            emit("consume_all", "partitions_for", infos.size(), "expected", countAcked(), "result", full,
                 "positions", positions, "beginning_offsets", byPartition(consumer.beginningOffsets(all, WAIT)),
                 "end_offsets", byPartition(consumer.endOffsets(all, WAIT)), "elapsed_ms", millisSince(started));

            // Again from the middle of each partition: a seek lands inside a batch, so the client has to skip
            // the batch's earlier records.
            started = System.nanoTime();
            Map<String, Object> seekTo = new TreeMap<>();
            long expected = 0;
            for (TopicPartition tp : all) {
                long count = indexByPartitionOffset.getOrDefault(tp.partition(), Map.of()).size();
                long middle = count / 2 + 1;
                consumer.seek(tp, middle);
                seekTo.put(Integer.toString(tp.partition()), middle);
                expected += count - middle;
            }
            Map<String, Object> again = readAndCheck(consumer, expected);
            emit("consume_from_middle", "seek_to", seekTo, "expected", expected, "result", again, "elapsed_ms", millisSince(started));

            // offsetsForTimes: the first offset whose timestamp is at least the target (Kafka looks inside batches).
            started = System.nanoTime();
            Map<String, Object> lookups = new TreeMap<>();
            Map<TopicPartition, Long> middleQuery = new HashMap<>();
            Map<TopicPartition, Long> exactQuery = new HashMap<>();
            Map<TopicPartition, Long> expectedMiddle = new HashMap<>();
            long latest = Long.MIN_VALUE;
            for (TopicPartition tp : all) {
                Map<Long, Integer> offsets = indexByPartitionOffset.getOrDefault(tp.partition(), Map.of());
                if (offsets.size() < 3) throw new IllegalStateException("partition " + tp + " has too few records to look inside");
                long middle = offsets.size() / 2 + 1;
                // Between the timestamps of records middle-1 and middle, so only `middle` qualifies.
                middleQuery.put(tp, timestamp(offsets.get(middle - 1)) + 1);
                exactQuery.put(tp, timestamp(offsets.get(middle)));
                expectedMiddle.put(tp, middle);
                for (int i : offsets.values()) latest = Math.max(latest, timestamp(i));
            }
            Map<TopicPartition, Long> oldest = new HashMap<>();
            Map<TopicPartition, Long> future = new HashMap<>();
            for (TopicPartition tp : all) {
                oldest.put(tp, 0L);
                future.put(tp, latest + 1);
            }
            Map<TopicPartition, OffsetAndTimestamp> between = consumer.offsetsForTimes(middleQuery, WAIT);
            Map<TopicPartition, OffsetAndTimestamp> exact = consumer.offsetsForTimes(exactQuery, WAIT);
            Map<TopicPartition, OffsetAndTimestamp> before = consumer.offsetsForTimes(oldest, WAIT);
            Map<TopicPartition, OffsetAndTimestamp> after = consumer.offsetsForTimes(future, WAIT);
            for (TopicPartition tp : all) {
                long middle = expectedMiddle.get(tp);
                lookups.put(Integer.toString(tp.partition()), map(
                    "expected_offset", middle,
                    "expected_timestamp", timestamp(indexByPartitionOffset.get(tp.partition()).get(middle)),
                    "first_timestamp", timestamp(indexByPartitionOffset.get(tp.partition()).get(0L)),
                    "between", offsetAndTimestamp(between.get(tp)),
                    "exact", offsetAndTimestamp(exact.get(tp)),
                    "before_all", offsetAndTimestamp(before.get(tp)),
                    "after_all", offsetAndTimestamp(after.get(tp))));
            }
            emit("offsets_for_times", "partitions", lookups, "elapsed_ms", millisSince(started));
        }
    }

    long countAcked() {
        long n = 0;
        for (Map<Long, Integer> m : indexByPartitionOffset.values()) n += m.size();
        return n;
    }

    static Object offsetAndTimestamp(OffsetAndTimestamp o) {
        return o == null ? null : map("offset", o.offset(), "timestamp", o.timestamp());
    }

    // ---------------------------------------------------------------------------------------------------------
    // 3. The admin client: topics, partitions, configs, and the errors for bad requests.

    Properties adminProps() {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return props;
    }

    void admin() throws Exception {
        String topic = prefix + "-admin";
        String defaults = prefix + "-defaults";
        String checked = prefix + "-validate-only";
        try (Admin admin = Admin.create(adminProps())) {
            // describeCluster (DescribeCluster, or Metadata when the broker lacks it) and the brokers' own configs.
            DescribeClusterResult cluster = admin.describeCluster();
            List<Integer> nodes = new ArrayList<>();
            for (Node n : cluster.nodes().get(60, TimeUnit.SECONDS)) nodes.add(n.id());
            nodes.sort(null);
            Node controller = cluster.controller().get(60, TimeUnit.SECONDS);
            emit("describe_cluster", "nodes", nodes, "controller", controller == null ? null : controller.id(),
                 "cluster_id", cluster.clusterId().get(60, TimeUnit.SECONDS));
            ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(nodes.get(0)));
            Config brokerConfig = admin.describeConfigs(List.of(broker)).all().get(60, TimeUnit.SECONDS).get(broker);
            emit("broker_config", "broker", nodes.get(0), "configs", configs(brokerConfig));

            // createTopics with partitions, replication factor and a config; the result echoes them (v5+).
            long started = System.nanoTime();
            CreateTopicsResult created = admin.createTopics(List.of(
                new NewTopic(topic, 4, (short) 2).configs(Map.of("retention.ms", "3600000", "segment.bytes", "1048576"))));
            created.all().get(60, TimeUnit.SECONDS);
            Map<String, Object> echoed = new TreeMap<>();
            for (ConfigEntry e : created.config(topic).get().entries())
                echoed.put(e.name(), map("value", e.value(), "source", String.valueOf(e.source())));
            emit("create_topic", "topic", topic, "num_partitions", created.numPartitions(topic).get(),
                 "replication_factor", created.replicationFactor(topic).get(), "configs", echoed, "elapsed_ms", millisSince(started));

            // Partition and replication factor left to the broker (CreateTopics v4+).
            CreateTopicsResult byDefault = admin.createTopics(List.of(new NewTopic(defaults, Optional.empty(), Optional.empty())));
            byDefault.all().get(60, TimeUnit.SECONDS);
            emit("create_topic_defaults", "topic", defaults, "num_partitions", byDefault.numPartitions(defaults).get(),
                 "replication_factor", byDefault.replicationFactor(defaults).get());

            // An explicit replica assignment: the first replica leads.
            String assigned = prefix + "-assigned";
            Map<Integer, List<Integer>> placement = Map.of(0, List.of(2, 1), 1, List.of(0, 2), 2, List.of(1, 0));
            admin.createTopics(List.of(new NewTopic(assigned, placement))).all().get(60, TimeUnit.SECONDS);
            TopicDescription placed = awaitValue(() -> describe(admin, assigned), d -> hasLeaders(d, 3));
            admin.createPartitions(Map.of(assigned, NewPartitions.increaseTo(4, List.of(List.of(2, 0))))).all().get(60, TimeUnit.SECONDS);
            TopicDescription placedGrown = awaitValue(() -> describe(admin, assigned), d -> hasLeaders(d, 4));
            emit("create_assigned", "topic", assigned, "created", describeTopic(placed), "grown", describeTopic(placedGrown));

            // validateOnly checks but creates nothing.
            String validateError = errorOf(admin.createTopics(List.of(new NewTopic(checked, 2, (short) 3)),
                                                              new CreateTopicsOptions().validateOnly(true)).all());
            emit("create_validate_only", "topic", checked, "error", validateError);

            // listTopics: both new topics (visible everywhere once the metadata spread), and no validate-only one.
            Set<String> listed = awaitValue(() -> names(admin), s -> s.contains(topic) && s.contains(defaults));
            emit("list_topics", "has_admin_topic", listed.contains(topic), "has_defaults_topic", listed.contains(defaults),
                 "has_validate_only_topic", listed.contains(checked), "has_records_topic", listed.contains(recordsTopic()));

            // describeTopics: partitions, leaders, replicas, ISR.
            TopicDescription description = awaitValue(() -> describe(admin, topic), d -> hasLeaders(d, 4));
            emit("describe_topic", "topic", topic, "description", describeTopic(description));

            // describeConfigs: the override is a topic config, everything else a default.
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            emit("describe_configs", "topic", topic, "configs", configs(describeConfigs(admin, resource)));
            Config withSynonyms = admin.describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(true).includeDocumentation(true))
                .all().get(60, TimeUnit.SECONDS).get(resource);
            Map<String, Object> detailed = new TreeMap<>();
            for (ConfigEntry e : withSynonyms.entries()) {
                List<Object> synonyms = new ArrayList<>();
                for (ConfigEntry.ConfigSynonym syn : e.synonyms()) synonyms.add(List.of(syn.name(), String.valueOf(syn.value()), String.valueOf(syn.source())));
                detailed.put(e.name(), map("value", e.value(), "source", String.valueOf(e.source()), "type", String.valueOf(e.type()), "synonyms", synonyms));
            }
            emit("describe_configs_synonyms", "topic", topic, "configs", detailed);

            // incrementalAlterConfigs with validateOnly checks and changes nothing.
            String validateOnlyError = errorOf(admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "1"), AlterConfigOp.OpType.SET))), new AlterConfigsOptions().validateOnly(true)).all());
            emit("incremental_validate_only", "topic", topic, "error", validateOnlyError,
                 "retention.ms", describeConfigs(admin, resource).get("retention.ms").value());

            // incrementalAlterConfigs: SET two, then DELETE one.
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("max.message.bytes", "2000000"), AlterConfigOp.OpType.SET)))).all().get(60, TimeUnit.SECONDS);
            Config afterSet = awaitValue(() -> describeConfigs(admin, resource), c -> "7200000".equals(c.get("retention.ms").value()));
            emit("incremental_set", "topic", topic, "configs", configs(afterSet));
            admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", null), AlterConfigOp.OpType.DELETE)))).all().get(60, TimeUnit.SECONDS);
            Config afterDelete = awaitValue(() -> describeConfigs(admin, resource),
                                            c -> c.get("retention.ms").source() != ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            emit("incremental_delete", "topic", topic, "configs", configs(afterDelete));

            // APPEND and SUBTRACT: for list configs only (cleanup.policy); appending a value already there is
            // allowed and leaves it an override.
            Map<String, Object> lists = new LinkedHashMap<>();
            lists.put("append_present_value", errorOf(alterOne(admin, resource, "cleanup.policy", "delete", AlterConfigOp.OpType.APPEND)));
            Config afterAppend = awaitValue(() -> describeConfigs(admin, resource),
                                            c -> c.get("cleanup.policy").source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            lists.put("cleanup.policy", List.of(afterAppend.get("cleanup.policy").value(), String.valueOf(afterAppend.get("cleanup.policy").source())));
            lists.put("append_invalid_value", errorOf(alterOne(admin, resource, "cleanup.policy", "shred", AlterConfigOp.OpType.APPEND)));
            lists.put("append_compact", errorOf(alterOne(admin, resource, "cleanup.policy", "compact", AlterConfigOp.OpType.APPEND)));
            Config afterCompact = awaitValue(() -> describeConfigs(admin, resource),
                                             c -> c.get("cleanup.policy").value().contains("compact"));
            lists.put("cleanup.policy_after_compact", afterCompact.get("cleanup.policy").value());
            lists.put("append_to_non_list", errorOf(alterOne(admin, resource, "retention.ms", "1", AlterConfigOp.OpType.APPEND)));
            lists.put("subtract_from_non_list", errorOf(alterOne(admin, resource, "retention.ms", "1", AlterConfigOp.OpType.SUBTRACT)));
            emit("incremental_lists", "topic", topic, "results", lists);

            // alterConfigs (deprecated; removed from the 4.x Admin): replaces every override of the topic.
            Method alterConfigs = findMethod(Admin.class, "alterConfigs", Map.class);
            if (alterConfigs == null) {
                emit("alter_configs", "available", false);
            } else {
                Object result = alterConfigs.invoke(admin, Map.of(resource, new Config(List.of(new ConfigEntry("cleanup.policy", "delete"),
                                                                                              new ConfigEntry("segment.ms", "600000")))));
                ((KafkaFuture<?>) result.getClass().getMethod("all").invoke(result)).get(60, TimeUnit.SECONDS);
                Config replaced = awaitValue(() -> describeConfigs(admin, resource), c -> "600000".equals(c.get("segment.ms").value()));
                emit("alter_configs", "available", true, "configs", configs(replaced));
            }

            // createPartitions: 4 -> 6, with leaders for the new ones.
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(6))).all().get(60, TimeUnit.SECONDS);
            TopicDescription grown = awaitValue(() -> describe(admin, topic), d -> hasLeaders(d, 6));
            emit("create_partitions", "topic", topic, "description", describeTopic(grown));

            // Some records in it, so deleting it has data to delete.
            int oldRecords = produceSome(topic, "old-", 100, null);

            // The errors a client gets for bad requests, by exception class.
            Map<String, Object> errors = new LinkedHashMap<>();
            errors.put("create_existing", errorOf(admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all()));
            errors.put("replication_factor_4", errorOf(admin.createTopics(List.of(new NewTopic(prefix + "-rf4", 1, (short) 4))).all()));
            errors.put("invalid_config_value", errorOf(admin.createTopics(List.of(
                new NewTopic(prefix + "-badvalue", 1, (short) 1).configs(Map.of("retention.ms", "forever")))).all()));
            errors.put("unknown_config", errorOf(admin.createTopics(List.of(
                new NewTopic(prefix + "-badname", 1, (short) 1).configs(Map.of("no.such.config", "1")))).all()));
            errors.put("zero_partitions", errorOf(admin.createTopics(List.of(new NewTopic(prefix + "-zero", 0, (short) 1))).all()));
            errors.put("invalid_name", errorOf(admin.createTopics(List.of(new NewTopic("bad/name", 1, (short) 1))).all()));
            errors.put("describe_missing", errorOf(admin.describeTopics(List.of(prefix + "-missing")).allTopicNames()));
            errors.put("describe_configs_missing", errorOf(admin.describeConfigs(List.of(
                new ConfigResource(ConfigResource.Type.TOPIC, prefix + "-missing"))).all()));
            errors.put("incremental_invalid_value", errorOf(admin.incrementalAlterConfigs(Map.of(resource, List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET)))).all()));
            errors.put("shrink_partitions", errorOf(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2))).all()));
            errors.put("delete_missing", errorOf(admin.deleteTopics(List.of(prefix + "-missing")).all()));
            errors.put("assign_unknown_broker", errorOf(admin.createTopics(List.of(
                new NewTopic(prefix + "-badassign", Map.of(0, List.of(0, 7))))).all()));
            errors.put("grow_onto_unknown_broker", errorOf(admin.createPartitions(Map.of(
                assigned, NewPartitions.increaseTo(5, List.of(List.of(7, 0))))).all()));
            Set<String> afterErrors = names(admin);
            emit("errors", "errors", errors, "created_by_errors", List.of(
                afterErrors.contains(prefix + "-rf4"), afterErrors.contains(prefix + "-badvalue"),
                afterErrors.contains(prefix + "-badname"), afterErrors.contains(prefix + "-zero"),
                afterErrors.contains(prefix + "-badassign")));

            // Topic ids: a topic is described and deleted by its id alone; an unknown id gets an unknown-id
            // answer the client can match up.
            Uuid topicId = description.topicId();
            String describedById = admin.describeTopics(TopicCollection.ofTopicIds(List.of(topicId))).allTopicIds()
                .get(60, TimeUnit.SECONDS).get(topicId).name();
            Uuid assignedId = describe(admin, assigned).topicId();
            admin.deleteTopics(TopicCollection.ofTopicIds(List.of(assignedId))).all().get(60, TimeUnit.SECONDS);
            emit("topic_ids", "topic", topic, "id", topicId.toString(), "described_by_id", describedById,
                 "records_topic_id", describe(admin, recordsTopic()).topicId().toString(),
                 "deleted_by_id", assigned, "deleted_listed", awaitValue(() -> names(admin), s -> !s.contains(assigned)).contains(assigned),
                 "delete_by_unknown_id", errorDetail(admin.deleteTopics(TopicCollection.ofTopicIds(List.of(Uuid.randomUuid()))).all()),
                 "describe_by_unknown_id", errorDetail(admin.describeTopics(TopicCollection.ofTopicIds(List.of(Uuid.randomUuid()))).allTopicIds()));

            // deleteTopics: gone from listTopics, then describing it fails.
            started = System.nanoTime();
            admin.deleteTopics(List.of(topic, defaults)).all().get(60, TimeUnit.SECONDS);
            Set<String> remaining = awaitValue(() -> names(admin), s -> !s.contains(topic) && !s.contains(defaults));
            emit("delete_topics", "still_listed", remaining.contains(topic) || remaining.contains(defaults),
                 "describe_deleted", errorOf(admin.describeTopics(List.of(topic)).allTopicNames()),
                 "records_topic_kept", remaining.contains(recordsTopic()), "elapsed_ms", millisSince(started));

            // The same name again: a new, empty topic, with nothing left of the old one's records.
            started = System.nanoTime();
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 3))).all().get(60, TimeUnit.SECONDS);
            awaitValue(() -> describe(admin, topic), d -> hasLeaders(d, 2));
            int newRecords = produceSome(topic, "new-", 10, 0);
            emit("recreate", "topic", topic, "old_records_acked", oldRecords, "new_records_acked", newRecords,
                 "read", readFromBeginning(topic, 2, 10), "elapsed_ms", millisSince(started));
        }
    }

    static boolean hasLeaders(TopicDescription d, int partitions) {
        if (d == null || d.partitions().size() != partitions) return false;
        for (TopicPartitionInfo p : d.partitions())
            if (p.leader() == null) return false;
        return true;
    }

    /** Sends `count` records keyed prefix+i with a default producer (to `partition`, or by key); returns how many were acknowledged. */
    int produceSome(String topic, String prefix, int count, Integer partition) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        int acked = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) futures.add(producer.send(new ProducerRecord<>(topic, partition, prefix + i, "v" + i)));
            for (Future<RecordMetadata> f : futures) {
                f.get(60, TimeUnit.SECONDS);
                acked++;
            }
        }
        return acked;
    }

    /** Everything in the topic's partitions, read from the beginning until `wanted` records came (or a minute passed). */
    Map<String, Object> readFromBeginning(String topic, int partitions, int wanted) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        List<Object> got = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> all = new ArrayList<>();
            for (int p = 0; p < partitions; p++) all.add(new TopicPartition(topic, p));
            consumer.assign(all);
            consumer.seekToBeginning(all);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (got.size() < wanted && System.nanoTime() < deadline)
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500)))
                    got.add(map("partition", r.partition(), "offset", r.offset(), "key", r.key()));
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                got.add(map("partition", r.partition(), "offset", r.offset(), "key", r.key()));
            return map("records", got, "end_offsets", byPartition(consumer.endOffsets(all, WAIT)));
        }
    }

    static KafkaFuture<Void> alterOne(Admin admin, ConfigResource resource, String name, String value, AlterConfigOp.OpType op) {
        return admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry(name, value), op)))).all();
    }

    static Set<String> names(Admin admin) {
        try {
            return admin.listTopics().names().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    /** The description, or null while the topic is unknown to the broker asked (metadata still spreading). */
    static TopicDescription describe(Admin admin, String topic) {
        try {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS).get(topic);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) return null;
            throw new RuntimeException(e);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static Config describeConfigs(Admin admin, ConfigResource resource) {
        try {
            return admin.describeConfigs(List.of(resource)).all().get(60, TimeUnit.SECONDS).get(resource);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static Object describeTopic(TopicDescription d) {
        List<Object> partitions = new ArrayList<>();
        for (TopicPartitionInfo p : d.partitions())
            partitions.add(map("partition", p.partition(), "leader", p.leader() == null ? null : p.leader().id(),
                               "replicas", ids(p.replicas()), "isr", ids(p.isr())));
        return map("name", d.name(), "internal", d.isInternal(), "partitions", partitions);
    }

    static List<Integer> ids(List<Node> nodes) {
        List<Integer> out = new ArrayList<>();
        for (Node n : nodes) out.add(n.id());
        return out;
    }

    static Map<String, Object> configs(Config config) {
        Map<String, Object> out = new TreeMap<>();
        for (ConfigEntry e : config.entries())
            out.put(e.name(), map("value", e.value(), "source", String.valueOf(e.source()), "default", e.isDefault(),
                                  "read_only", e.isReadOnly(), "sensitive", e.isSensitive()));
        return out;
    }

    /** "none" when the future succeeds, otherwise the simple class name of what it failed with. */
    static String errorOf(KafkaFuture<?> future) {
        String detail = errorDetail(future);
        int colon = detail.indexOf(':');
        return colon < 0 ? detail : detail.substring(0, colon);
    }

    /** Like errorOf, followed by ": " and the exception's message. */
    static String errorDetail(KafkaFuture<?> future) {
        try {
            future.get(60, TimeUnit.SECONDS);
            return "none";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
        } catch (Exception e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    /** Asks again (metadata and configs spread to the brokers through ZooKeeper) until the answer fits. */
    static <T> T awaitValue(Supplier<T> ask, java.util.function.Predicate<T> good) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        long sleep = 10;
        while (true) {
            T value = ask.get();
            if (good.test(value)) return value;
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting; last answer: " + value);
            try {
                Thread.sleep(sleep);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            sleep = Math.min(sleep * 2, 500);
        }
    }

    static Method findMethod(Class<?> type, String name, Class<?>... parameters) {
        try {
            return type.getMethod(name, parameters);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Output.

    static String clientVersion() {
        try (InputStream in = KafkaProducer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (Exception e) {
            return "unknown";
        }
    }

    static long millisSince(long nanoStart) { return (System.nanoTime() - nanoStart) / 1_000_000; }

    static void example(List<String> examples, String what) {
        if (examples.size() < MAX_EXAMPLES) examples.add(what);
    }

    static String abbreviate(String s) {
        return s == null ? "null" : s.length() <= 40 ? '"' + s + '"' : '"' + s.substring(0, 40) + "...\" (" + s.length() + " chars)";
    }

    static Map<String, Object> stringKeys(Map<Integer, Long> m) {
        Map<String, Object> out = new TreeMap<>();
        m.forEach((k, v) -> out.put(Integer.toString(k), v));
        return out;
    }

    static Map<String, Object> byPartition(Map<TopicPartition, Long> m) {
        Map<String, Object> out = new TreeMap<>();
        m.forEach((tp, v) -> out.put(Integer.toString(tp.partition()), v));
        return out;
    }
}
