package ferry;

import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.TimeWindows;

/**
 * Kafka Streams applications for tests/integration/test_streams.py. One instance per process; instances of one
 * application id share its work. Every state change is printed as {"state": "RUNNING"}; an uncaught exception ends
 * the process with status 1.
 *
 * <p>usage: StreamsApp word-count|windowed-count BOOTSTRAP APPLICATION_ID STATE_DIR INPUT OUTPUT
 *
 * <ul>
 *   <li>word-count, with exactly_once_v2: splits each input value into words, re-keys by word (a repartition
 *       topic) and counts them in a state store (a compacted changelog topic); every new count goes out as word ->
 *       count, the record cache off, so a word's counts in OUTPUT are 1, 2, 3, ... with nothing repeated.
 *   <li>windowed-count, at_least_once: counts records per key in 10 s tumbling windows of their timestamps
 *       (with an hour of grace for late ones); out as "key@windowStart" -> count.
 * </ul>
 */
public final class StreamsApp {
  private StreamsApp() {}

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 6) {
      System.err.println("usage: StreamsApp word-count|windowed-count BOOTSTRAP APPLICATION_ID STATE_DIR INPUT OUTPUT");
      System.exit(2);
    }
    final String app = args[0];
    final Properties props = new Properties();
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[1]);
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[2]);
    props.put(StreamsConfig.STATE_DIR_CONFIG, args[3]);
    props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 3);
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
    // A killed instance's tasks move once the group notices it gone: 10 s rather than the default 45 s.
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 10000);
    final Topology topology;
    switch (app) {
      case "word-count" -> {
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        topology = wordCount(args[4], args[5]);
      }
      case "windowed-count" -> {
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        topology = windowedCount(args[4], args[5]);
      }
      default -> throw new IllegalArgumentException("unknown application " + app);
    }

    final KafkaStreams streams = new KafkaStreams(topology, props);
    final CountDownLatch stopped = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      System.out.println("{\"state\": \"" + now + "\"}");
      System.out.flush();
    });
    streams.setUncaughtExceptionHandler(e -> {
      e.printStackTrace();
      stopped.countDown();
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> streams.close(Duration.ofSeconds(30))));
    streams.start();
    stopped.await();
    streams.close(Duration.ofSeconds(30));
    System.exit(1);
  }

  private static Topology wordCount(String input, String output) {
    final StreamsBuilder builder = new StreamsBuilder();
    builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .flatMapValues(line -> Arrays.asList(line.split(" ")))
        .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
        .count(Materialized.as("counts"))
        .toStream()
        .mapValues(String::valueOf)
        .to(output, Produced.with(Serdes.String(), Serdes.String()));
    return builder.build();
  }

  private static Topology windowedCount(String input, String output) {
    final StreamsBuilder builder = new StreamsBuilder();
    builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .groupByKey()
        .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofHours(1)))
        .count(Materialized.as("window-counts"))
        .toStream((window, count) -> window.key() + "@" + window.window().start())
        .mapValues(String::valueOf)
        .to(output, Produced.with(Serdes.String(), Serdes.String()));
    return builder.build();
  }
}
