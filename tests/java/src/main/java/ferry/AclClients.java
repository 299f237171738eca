package ferry;

import static ferry.JsonLines.emit;

import java.io.FileInputStream;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.quota.ClientQuotaFilterComponent;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java client under Ferry's ACLs (tests/integration/test_acls.py): producers, consumers, transactional
 * producers and the AdminClient calls that manage ACLs and report authorized operations (KIP-430), each as one
 * step whose outcome (what it did, or the exception that stopped it) is printed for the test to judge.
 *
 * <pre>
 * java -cp CLASSES:DEPS ferry.AclClients STEP.properties...
 * </pre>
 *
 * Each properties file is one step, run in the order given, with its own client: the client's settings
 * (bootstrap.servers, security.protocol, sasl.*) and the step's, under ferry.: ferry.name and ferry.step, one of
 * <ul>
 * <li>produce: ferry.topic, ferry.count records "ferry.prefix-i" to partition 0, each awaited; ferry.idempotent
 *     (default false) sets enable.idempotence;</li>
 * <li>consume: ferry.topic, ferry.group; subscribes and polls until ferry.count records or ferry.timeout.ms,
 *     then commits;</li>
 * <li>transaction: ferry.topic, ferry.transactional.id; initTransactions, then one transaction of ferry.count
 *     records, committed;</li>
 * <li>create-acls: ferry.acls, bindings separated by ';';</li>
 * <li>describe-acls: ferry.filter, one filter; prints the bindings it matches;</li>
 * <li>delete-acls: ferry.filters, filters separated by ';'; prints the bindings deleted;</li>
 * <li>authorized-operations: describeCluster, and describeTopics of ferry.topic and describeConsumerGroups of
 *     ferry.group when given, with includeAuthorizedOperations; prints each operation set (null when the
 *     broker sent none).</li>
 * </ul>
 * and the other AdminClient calls Strimzi's User Operator makes for a user:
 * <ul>
 * <li>alter-scram: upserts ferry.scram.user's SCRAM-SHA-512 credential with ferry.password (4096 iterations);</li>
 * <li>describe-scram: describeUserScramCredentials of ferry.scram.user; prints its mechanisms and iterations;</li>
 * <li>alter-quotas: alterClientQuotas of ferry.entity (user=NAME and/or client-id=NAME separated by ',', a NAME of
 *     "&lt;default&gt;" the default entity) with ferry.ops, KEY=VALUE separated by ',' (an empty VALUE removes
 *     the key);</li>
 * <li>describe-quotas: describeClientQuotas with a strict filter matching ferry.entity exactly; prints each
 *     entity found and its quotas.</li>
 * </ul>
 * A binding is RESOURCE_TYPE,PATTERN_TYPE,NAME,PRINCIPAL,HOST,OPERATION,PERMISSION in the enums' names
 * (TOPIC,LITERAL,orders,User:alice,*,READ,ALLOW); a filter has the same fields, where a name, principal or host
 * of "null" matches any. Each step prints one JSON line {"check": "step", "name", "step", "ok", ...}; on failure
 * "error" (the exception) and "error_classes" (its class and its causes' classes, outermost first). The exit
 * status is 0 once every step ran, whatever their outcomes: the test decides which outcome is right.
 */
public final class AclClients {
    private AclClients() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: AclClients STEP.properties...");
            System.exit(2);
        }
        emit("start", "client_version", JavaClients.clientVersion());
        for (String path : args) {
            Properties props = new Properties();
            try (InputStream in = new FileInputStream(path)) {
                props.load(in);
            }
            runStep(props);
        }
        emit("done", "ok", true);
        System.exit(0);
    }

    /** The client settings of a step: everything but the ferry.* keys. */
    private static Properties clientSettings(Properties all) {
        Properties out = new Properties();
        for (String key : all.stringPropertyNames()) {
            if (!key.startsWith("ferry.")) out.setProperty(key, all.getProperty(key));
        }
        return out;
    }

    private static void runStep(Properties all) {
        String name = all.getProperty("ferry.name");
        String step = all.getProperty("ferry.step");
        long started = System.nanoTime();
        List<Object> out = new ArrayList<>();
        try {
            switch (step) {
                case "produce": produce(all, out); break;
                case "consume": consume(all, out); break;
                case "transaction": transaction(all, out); break;
                case "create-acls": createAcls(all, out); break;
                case "describe-acls": describeAcls(all, out); break;
                case "delete-acls": deleteAcls(all, out); break;
                case "authorized-operations": authorizedOperations(all, out); break;
                case "alter-scram": alterScram(all, out); break;
                case "describe-scram": describeScram(all, out); break;
                case "alter-quotas": alterQuotas(all, out); break;
                case "describe-quotas": describeQuotas(all, out); break;
                default: throw new IllegalArgumentException("unknown ferry.step " + step);
            }
            List<Object> line = new ArrayList<>(List.of("name", name, "step", step, "ok", true));
            line.addAll(out);
            line.addAll(List.of("elapsed_ms", (System.nanoTime() - started) / 1_000_000));
            emit("step", line.toArray());
        } catch (Exception e) {
            Throwable t = e;
            while (t instanceof ExecutionException && t.getCause() != null) t = t.getCause();
            List<String> classes = new ArrayList<>();
            for (Throwable c = e; c != null && classes.size() < 10; c = c.getCause()) classes.add(c.getClass().getName());
            System.err.println("step " + name + " (" + step + ") failed: " + e);
            List<Object> line = new ArrayList<>(List.of("name", name, "step", step, "ok", false, "error",
                                                        t.toString(), "error_classes", classes));
            line.addAll(out);
            line.addAll(List.of("elapsed_ms", (System.nanoTime() - started) / 1_000_000));
            emit("step", line.toArray());
        }
    }

    private static long timeoutMs(Properties all) {
        return Long.parseLong(all.getProperty("ferry.timeout.ms", "30000"));
    }

    private static Properties producerSettings(Properties all) {
        Properties p = clientSettings(all);
        long timeout = timeoutMs(all);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(timeout));
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, String.valueOf(Math.min(timeout, 20000)));
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(Math.max(timeout, 20000)));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }

    private static void produce(Properties all, List<Object> out) throws Exception {
        Properties p = producerSettings(all);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, all.getProperty("ferry.idempotent", "false"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        String topic = all.getProperty("ferry.topic");
        int count = Integer.parseInt(all.getProperty("ferry.count"));
        String prefix = all.getProperty("ferry.prefix", "java");
        int sent = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            try {
                for (int i = 0; i < count; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, prefix + "-" + i))
                            .get(timeoutMs(all), TimeUnit.MILLISECONDS);
                    sent++;
                }
            } finally {
                out.addAll(List.of("sent", sent));
            }
        }
    }

    private static void consume(Properties all, List<Object> out) throws Exception {
        Properties c = clientSettings(all);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, all.getProperty("ferry.group"));
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        int count = Integer.parseInt(all.getProperty("ferry.count"));
        long deadline = System.nanoTime() + timeoutMs(all) * 1_000_000L;
        List<String> consumed = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
            try {
                consumer.subscribe(List.of(all.getProperty("ferry.topic")));
                while (consumed.size() < count && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        consumed.add(r.value());
                    }
                }
                consumer.commitSync(Duration.ofSeconds(30));
            } finally {
                out.addAll(List.of("consumed", consumed));
            }
        }
    }

    private static void transaction(Properties all, List<Object> out) throws Exception {
        Properties p = producerSettings(all);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, all.getProperty("ferry.transactional.id"));
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "30000");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        String topic = all.getProperty("ferry.topic");
        int count = Integer.parseInt(all.getProperty("ferry.count"));
        String prefix = all.getProperty("ferry.prefix", "txn");
        String stage = "initTransactions";
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            try {
                producer.initTransactions();
                stage = "send";
                producer.beginTransaction();
                for (int i = 0; i < count; i++) producer.send(new ProducerRecord<>(topic, 0, null, prefix + "-" + i));
                producer.flush();
                stage = "commitTransaction";
                producer.commitTransaction();
                stage = "committed";
            } finally {
                out.addAll(List.of("stage", stage));
            }
        }
    }

    private static void alterScram(Properties all, List<Object> out) throws Exception {
        ScramCredentialInfo info = new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096);
        try (Admin admin = Admin.create(clientSettings(all))) {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(
                all.getProperty("ferry.scram.user"), info, all.getProperty("ferry.password")))).all().get(60, TimeUnit.SECONDS);
        }
    }

    private static void describeScram(Properties all, List<Object> out) throws Exception {
        String user = all.getProperty("ferry.scram.user");
        try (Admin admin = Admin.create(clientSettings(all))) {
            UserScramCredentialsDescription d =
                admin.describeUserScramCredentials(List.of(user)).description(user).get(60, TimeUnit.SECONDS);
            List<Object> credentials = new ArrayList<>();
            for (ScramCredentialInfo info : d.credentialInfos())
                credentials.add(Map.of("mechanism", info.mechanism().mechanismName(), "iterations", info.iterations()));
            out.addAll(List.of("credentials", credentials));
        }
    }

    /** ferry.entity as ClientQuotaEntity's map: a null name is the default entity. */
    private static Map<String, String> quotaEntity(Properties all) {
        Map<String, String> entity = new HashMap<>();
        for (String part : all.getProperty("ferry.entity").split(",")) {
            String[] kv = part.split("=", 2);
            entity.put(kv[0], kv[1].equals("<default>") ? null : kv[1]);
        }
        return entity;
    }

    private static void alterQuotas(Properties all, List<Object> out) throws Exception {
        List<ClientQuotaAlteration.Op> ops = new ArrayList<>();
        for (String op : all.getProperty("ferry.ops").split(",")) {
            String[] kv = op.split("=", 2);
            ops.add(new ClientQuotaAlteration.Op(kv[0], kv[1].isEmpty() ? null : Double.valueOf(kv[1])));
        }
        try (Admin admin = Admin.create(clientSettings(all))) {
            admin.alterClientQuotas(List.of(new ClientQuotaAlteration(new ClientQuotaEntity(quotaEntity(all)), ops)))
                .all().get(60, TimeUnit.SECONDS);
        }
    }

    private static void describeQuotas(Properties all, List<Object> out) throws Exception {
        List<ClientQuotaFilterComponent> components = new ArrayList<>();
        for (Map.Entry<String, String> e : quotaEntity(all).entrySet()) {
            components.add(e.getValue() == null ? ClientQuotaFilterComponent.ofDefaultEntity(e.getKey())
                                                : ClientQuotaFilterComponent.ofEntity(e.getKey(), e.getValue()));
        }
        try (Admin admin = Admin.create(clientSettings(all))) {
            Map<ClientQuotaEntity, Map<String, Double>> found =
                admin.describeClientQuotas(ClientQuotaFilter.containsOnly(components)).entities().get(60, TimeUnit.SECONDS);
            List<Object> entities = new ArrayList<>();
            for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : found.entrySet()) {
                Map<String, Object> entity = new HashMap<>();
                e.getKey().entries().forEach((type, name) -> entity.put(type, name == null ? "<default>" : name));
                entities.add(Map.of("entity", entity, "quotas", e.getValue()));
            }
            out.addAll(List.of("entities", entities));
        }
    }

    private static String nullable(String field) {
        return field.equals("null") ? null : field;
    }

    static AclBinding binding(String spec) {
        String[] f = spec.split(",", -1);
        if (f.length != 7) throw new IllegalArgumentException("a binding has 7 fields: " + spec);
        return new AclBinding(new ResourcePattern(ResourceType.valueOf(f[0]), f[2], PatternType.valueOf(f[1])),
                              new AccessControlEntry(f[3], f[4], AclOperation.valueOf(f[5]),
                                                     AclPermissionType.valueOf(f[6])));
    }

    static AclBindingFilter filter(String spec) {
        String[] f = spec.split(",", -1);
        if (f.length != 7) throw new IllegalArgumentException("a filter has 7 fields: " + spec);
        return new AclBindingFilter(
            new ResourcePatternFilter(ResourceType.valueOf(f[0]), nullable(f[2]), PatternType.valueOf(f[1])),
            new AccessControlEntryFilter(nullable(f[3]), nullable(f[4]), AclOperation.valueOf(f[5]),
                                         AclPermissionType.valueOf(f[6])));
    }

    static String format(AclBinding b) {
        ResourcePattern r = b.pattern();
        AccessControlEntry e = b.entry();
        return String.join(",", r.resourceType().name(), r.patternType().name(), r.name(), e.principal(), e.host(),
                           e.operation().name(), e.permissionType().name());
    }

    private static List<String> formatted(Collection<AclBinding> bindings) {
        Set<String> out = new TreeSet<>();
        for (AclBinding b : bindings) out.add(format(b));
        return new ArrayList<>(out);
    }

    private static List<String> specs(String joined) {
        List<String> out = new ArrayList<>();
        for (String s : joined.split(";")) {
            if (!s.isBlank()) out.add(s.trim());
        }
        return out;
    }

    private static Admin admin(Properties all) {
        Properties p = clientSettings(all);
        p.put("default.api.timeout.ms", String.valueOf(timeoutMs(all)));
        p.put("request.timeout.ms", String.valueOf(Math.min(timeoutMs(all), 20000)));
        return Admin.create(p);
    }

    private static void createAcls(Properties all, List<Object> out) throws Exception {
        List<AclBinding> bindings = new ArrayList<>();
        for (String s : specs(all.getProperty("ferry.acls"))) bindings.add(binding(s));
        try (Admin admin = admin(all)) {
            admin.createAcls(bindings).all().get(timeoutMs(all), TimeUnit.MILLISECONDS);
        }
        out.addAll(List.of("created", formatted(bindings)));
    }

    private static void describeAcls(Properties all, List<Object> out) throws Exception {
        try (Admin admin = admin(all)) {
            Collection<AclBinding> found = admin.describeAcls(filter(all.getProperty("ferry.filter"))).values()
                .get(timeoutMs(all), TimeUnit.MILLISECONDS);
            out.addAll(List.of("bindings", formatted(found)));
        }
    }

    private static void deleteAcls(Properties all, List<Object> out) throws Exception {
        List<AclBindingFilter> filters = new ArrayList<>();
        for (String s : specs(all.getProperty("ferry.filters"))) filters.add(filter(s));
        try (Admin admin = admin(all)) {
            Collection<AclBinding> deleted = admin.deleteAcls(filters).all().get(timeoutMs(all), TimeUnit.MILLISECONDS);
            out.addAll(List.of("deleted", formatted(deleted)));
        }
    }

    private static List<String> operations(Set<AclOperation> ops) {
        if (ops == null) return null;
        Set<String> out = new TreeSet<>();
        for (AclOperation op : ops) out.add(op.name());
        return new ArrayList<>(out);
    }

    private static void authorizedOperations(Properties all, List<Object> out) throws Exception {
        long timeout = timeoutMs(all);
        try (Admin admin = admin(all)) {
            Set<AclOperation> cluster = admin.describeCluster(new DescribeClusterOptions()
                .includeAuthorizedOperations(true)).authorizedOperations().get(timeout, TimeUnit.MILLISECONDS);
            out.addAll(List.of("cluster", JsonLines.map("operations", operations(cluster))));
            String topic = all.getProperty("ferry.topic");
            if (topic != null) {
                Map<String, TopicDescription> topics = admin.describeTopics(List.of(topic),
                    new DescribeTopicsOptions().includeAuthorizedOperations(true)).allTopicNames()
                    .get(timeout, TimeUnit.MILLISECONDS);
                out.addAll(List.of("topic", JsonLines.map("operations",
                                                         operations(topics.get(topic).authorizedOperations()))));
            }
            String group = all.getProperty("ferry.group");
            if (group != null) {
                ConsumerGroupDescription description = admin.describeConsumerGroups(List.of(group),
                    new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).all()
                    .get(timeout, TimeUnit.MILLISECONDS).get(group);
                out.addAll(List.of("group", JsonLines.map("operations",
                                                         operations(description.authorizedOperations()))));
            }
        }
    }
}
