// Writes the seed corpus of txn_records_fuzz with Kafka's own generated TransactionLogKey and
// TransactionLogValue classes, so the seeds are the bytes Kafka stores. Run from this directory:
//
//   L=<kafka 4.x>/libs; java -cp "$L/kafka-clients-4.4.0.jar:$L/kafka-transaction-coordinator-4.4.0.jar" MakeCorpus.java
//
// Each file is a selector byte ('k' key, 'v' value) and then the record's key or value: its int16 version
// and the message of that version.
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogKey;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;

public class MakeCorpus {
  static void write(String name, char selector, Message m, short version) throws Exception {
    ObjectSerializationCache cache = new ObjectSerializationCache();
    int size = m.size(cache, version);
    ByteBuffer buf = ByteBuffer.allocate(1 + 2 + size);
    buf.put((byte) selector);
    buf.putShort(version);
    m.write(new ByteBufferAccessor(buf), cache, version);
    Files.write(Path.of("txn_records_corpus", name), buf.array());
  }

  static TransactionLogValue value(byte state, List<TransactionLogValue.PartitionsSchema> partitions) {
    return new TransactionLogValue().setProducerId(4001).setProducerEpoch((short) 7).setTransactionTimeoutMs(60000)
        .setTransactionStatus(state).setTransactionPartitions(partitions)
        .setTransactionLastUpdateTimestampMs(1700000001000L).setTransactionStartTimestampMs(1700000000000L);
  }

  public static void main(String[] args) throws Exception {
    write("key-v0", 'k', new TransactionLogKey().setTransactionalId("orders-processor-0"), (short) 0);
    List<TransactionLogValue.PartitionsSchema> parts = List.of(
        new TransactionLogValue.PartitionsSchema().setTopic("orders").setPartitionIds(List.of(0, 2)),
        new TransactionLogValue.PartitionsSchema().setTopic("__consumer_offsets").setPartitionIds(List.of(17)));
    write("value-v0-empty", 'v', value((byte) 0, null).setTransactionStartTimestampMs(-1), (short) 0);
    write("value-v0-ongoing", 'v', value((byte) 1, parts), (short) 0);
    write("value-v0-prepare-commit", 'v', value((byte) 2, parts), (short) 0);
    write("value-v0-complete-abort", 'v', value((byte) 5, List.of()), (short) 0);
    write("value-v1-tagged", 'v', value((byte) 2, parts).setPreviousProducerId(4000).setNextProducerId(4002)
        .setNextProducerEpoch((short) 0).setClientTransactionVersion((short) 2), (short) 1);
    write("value-v1-empty", 'v', value((byte) 0, null).setTransactionStartTimestampMs(-1), (short) 1);
  }
}
