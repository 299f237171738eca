// Command franz-secure is franz-go over each of Ferry's secure listeners, for
// tests/integration/test_security_clients.py. CASES is a JSON file holding a list of cases; they run at once. Per
// case, a transactional producer commits COMMITTED_PER_TXN records, aborts ABORTED, and commits COMMITTED_PER_TXN
// more (record i of a transaction to partition i mod PARTITIONS, so every transaction touches every partition);
// then a consumer in GROUP with read_committed isolation reads the topic until it has every committed record, or
// until the case's timeout, and commits its offsets. It prints one JSON line per case:
// {"case": NAME, "ok": true, "sent_committed": N, "sent_aborted": M, "consumed": [...]} (or "ok": false with
// "stage" and "error"), and exits 1 if any case failed.
//
// A case: {"name", "bootstrap", "security_protocol" (SSL, SASL_PLAINTEXT or SASL_SSL), "mechanism" (PLAIN,
// SCRAM-SHA-256 or SCRAM-SHA-512), "username", "password", "ca", "cert", "key" (PEM files), "topic",
// "partitions", "transactional_id", "group", "committed_per_txn", "aborted", "timeout_ms"}.
//
// usage: franz-secure CASES
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

type secureCase struct {
	Name             string `json:"name"`
	Bootstrap        string `json:"bootstrap"`
	SecurityProtocol string `json:"security_protocol"`
	Mechanism        string `json:"mechanism"`
	Username         string `json:"username"`
	Password         string `json:"password"`
	CA               string `json:"ca"`
	Cert             string `json:"cert"`
	Key              string `json:"key"`
	Topic            string `json:"topic"`
	Partitions       int    `json:"partitions"`
	TransactionalID  string `json:"transactional_id"`
	Group            string `json:"group"`
	CommittedPerTxn  int    `json:"committed_per_txn"`
	Aborted          int    `json:"aborted"`
	TimeoutMs        int    `json:"timeout_ms"`
}

type result struct {
	Case          string   `json:"case"`
	OK            bool     `json:"ok"`
	Stage         string   `json:"stage,omitempty"`
	Error         string   `json:"error,omitempty"`
	SentCommitted int      `json:"sent_committed"`
	SentAborted   int      `json:"sent_aborted"`
	Consumed      []string `json:"consumed"`
	ElapsedMs     int64    `json:"elapsed_ms"`
}

var printMu sync.Mutex

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: franz-secure CASES"))
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var cases []secureCase
	if err := json.Unmarshal(data, &cases); err != nil {
		fail(err)
	}
	var wg sync.WaitGroup
	failed := false
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := run(c)
			out, _ := json.Marshal(r)
			printMu.Lock()
			defer printMu.Unlock()
			fmt.Println(string(out))
			if !r.OK {
				failed = true
			}
		}()
	}
	wg.Wait()
	if failed {
		os.Exit(1)
	}
}

// securityOpts: the dialer and login options of a case's listener.
func securityOpts(c secureCase) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if c.SecurityProtocol == "SSL" || c.SecurityProtocol == "SASL_SSL" {
		pem, err := os.ReadFile(c.CA)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", c.CA)
		}
		config := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if c.Cert != "" {
			pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
			if err != nil {
				return nil, err
			}
			config.Certificates = []tls.Certificate{pair}
		}
		// franz-go sets ServerName from each broker's host when the config has none.
		opts = append(opts, kgo.DialTLSConfig(config))
	}
	if strings.HasPrefix(c.SecurityProtocol, "SASL_") {
		switch c.Mechanism {
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: c.Username, Pass: c.Password}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: c.Username, Pass: c.Password}.AsSha256Mechanism()))
		case "SCRAM-SHA-512":
			opts = append(opts, kgo.SASL(scram.Auth{User: c.Username, Pass: c.Password}.AsSha512Mechanism()))
		default:
			return nil, fmt.Errorf("unknown mechanism %q", c.Mechanism)
		}
	}
	return opts, nil
}

func run(c secureCase) (r result) {
	started := time.Now()
	r = result{Case: c.Name, Consumed: []string{}}
	defer func() { r.ElapsedMs = time.Since(started).Milliseconds() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.TimeoutMs)*time.Millisecond)
	defer cancel()
	failAt := func(stage string, err error) result {
		r.Stage, r.Error = stage, err.Error()
		return r
	}
	security, err := securityOpts(c)
	if err != nil {
		return failAt("config", err)
	}
	base := append([]kgo.Opt{kgo.SeedBrokers(strings.Split(c.Bootstrap, ",")...)}, security...)

	producer, err := kgo.NewClient(append(base,
		kgo.TransactionalID(c.TransactionalID),
		kgo.TransactionTimeout(30*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)...)
	if err != nil {
		return failAt("produce", err)
	}
	defer producer.Close()
	// committed, aborted, committed: the aborted records lie between committed ones in every partition.
	next := 0
	for txn := 0; txn < 3; txn++ {
		commit := txn != 1
		if err := producer.BeginTransaction(); err != nil {
			return failAt("produce", err)
		}
		count := c.Aborted
		if commit {
			count = c.CommittedPerTxn
		}
		records := make([]*kgo.Record, 0, count)
		for i := 0; i < count; i++ {
			value := "a-" + strconv.Itoa(i)
			if commit {
				value = "c-" + strconv.Itoa(next+i)
			}
			records = append(records, &kgo.Record{Topic: c.Topic, Partition: int32(i % c.Partitions), Value: []byte(value)})
		}
		if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
			return failAt("produce", err)
		}
		if err := producer.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			return failAt("produce", err)
		}
		if commit {
			next += count
			r.SentCommitted += count
		} else {
			r.SentAborted += count
		}
	}
	producer.Close()

	consumer, err := kgo.NewClient(append(base,
		kgo.ConsumerGroup(c.Group),
		kgo.ConsumeTopics(c.Topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
	)...)
	if err != nil {
		return failAt("consume", err)
	}
	defer consumer.Close()
	for len(r.Consumed) < r.SentCommitted {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			return failAt("consume", fmt.Errorf("%d of %d records by the deadline: %w", len(r.Consumed),
				r.SentCommitted, ctx.Err()))
		}
		var fetchErr error
		fetches.EachError(func(topic string, partition int32, err error) {
			fetchErr = fmt.Errorf("%s/%d: %w", topic, partition, err)
		})
		if fetchErr != nil {
			return failAt("consume", fetchErr)
		}
		fetches.EachRecord(func(rec *kgo.Record) { r.Consumed = append(r.Consumed, string(rec.Value)) })
	}
	if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
		return failAt("commit", err)
	}
	r.OK = true
	return r
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "franz-secure:", err)
	os.Exit(1)
}
