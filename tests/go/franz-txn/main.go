// Command franz-txn is franz-go's transactional producer against a broker, for tests/integration/test_transactions.py:
// it sends COUNT records ("franz-0" .. "franz-<COUNT-1>") to partition 0 of TOPIC in transactions of SIZE records,
// aborting every third transaction after its records were acknowledged and sending those records again in the next
// one. It prints {"committed": N, "aborted": M} once every record went out in a committed transaction.
//
// usage: franz-txn BOOTSTRAP TOPIC TRANSACTIONAL_ID COUNT SIZE
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) != 6 {
		fail(fmt.Errorf("usage: franz-txn BOOTSTRAP TOPIC TRANSACTIONAL_ID COUNT SIZE"))
	}
	topic := os.Args[2]
	count, err := strconv.Atoi(os.Args[4])
	if err != nil {
		fail(err)
	}
	size, err := strconv.Atoi(os.Args[5])
	if err != nil {
		fail(err)
	}
	client, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(os.Args[1], ",")...),
		kgo.TransactionalID(os.Args[3]),
		kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	if err != nil {
		fail(err)
	}
	defer client.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	committed, aborted := 0, 0
	for transactions := 1; committed < count; transactions++ {
		if err := client.BeginTransaction(); err != nil {
			fail(err)
		}
		end := min(committed+size, count)
		for i := committed; i < end; i++ {
			record := &kgo.Record{Topic: topic, Partition: 0, Value: []byte("franz-" + strconv.Itoa(i))}
			if err := client.ProduceSync(ctx, record).FirstErr(); err != nil {
				fail(err)
			}
		}
		commit := transactions%3 != 0
		if err := client.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			fail(err)
		}
		if commit {
			committed = end
		} else {
			aborted++
		}
	}
	out, _ := json.Marshal(map[string]int{"committed": committed, "aborted": aborted})
	fmt.Println(string(out))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "franz-txn:", err)
	os.Exit(1)
}
