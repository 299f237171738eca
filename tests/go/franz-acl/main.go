// Command franz-acl is franz-go under Ferry's ACLs, for tests/integration/test_acls.py: each case produces to a
// topic, or consumes one in a group, as one user over SASL_PLAINTEXT, and reports what franz-go made of the
// broker's answer, in particular the kerr error (franz-go's own type for Kafka's error codes) it returned.
//
// CASES is a JSON file holding a list of cases; they run at once. A case: {"name", "bootstrap", "mechanism"
// (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), "username", "password", "action" ("produce" or "consume"), "topic",
// "group" (consume), "count" (records to produce, or to wait for when consuming), "idempotent" (produce: leave
// franz-go's idempotent producer on; off, the producer needs no InitProducerId), "timeout_ms"}.
//
// Record i of a case is "franz-NAME-i".
//
// It prints one JSON line per case: {"case", "ok", "done" (records produced or consumed), "error", "kerr_code",
// "kerr_message" (the kerr.Error found in the error chain, by errors.As; 0 and "" when there is none),
// "is_topic_authorization_failed", "is_group_authorization_failed" (errors.Is against kerr's values)}. The exit
// status is 0 once every case ran, whatever their outcomes: the test decides which outcome is right.
//
// usage: franz-acl CASES
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

type aclCase struct {
	Name       string `json:"name"`
	Bootstrap  string `json:"bootstrap"`
	Mechanism  string `json:"mechanism"`
	Username   string `json:"username"`
	Password   string `json:"password"`
	Action     string `json:"action"`
	Topic      string `json:"topic"`
	Group      string `json:"group"`
	Count      int    `json:"count"`
	Idempotent bool   `json:"idempotent"`
	TimeoutMs  int    `json:"timeout_ms"`
}

type result struct {
	Case                       string `json:"case"`
	OK                         bool   `json:"ok"`
	Done                       int    `json:"done"`
	Error                      string `json:"error,omitempty"`
	KerrCode                   int16  `json:"kerr_code"`
	KerrMessage                string `json:"kerr_message"`
	IsTopicAuthorizationFailed bool   `json:"is_topic_authorization_failed"`
	IsGroupAuthorizationFailed bool   `json:"is_group_authorization_failed"`
	ElapsedMs                  int64  `json:"elapsed_ms"`
}

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: franz-acl CASES"))
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var cases []aclCase
	if err := json.Unmarshal(data, &cases); err != nil {
		fail(err)
	}
	var wg sync.WaitGroup
	var printMu sync.Mutex
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := run(c)
			out, _ := json.Marshal(r)
			printMu.Lock()
			defer printMu.Unlock()
			fmt.Println(string(out))
		}()
	}
	wg.Wait()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "franz-acl:", err)
	os.Exit(2)
}

func saslOpt(c aclCase) (kgo.Opt, error) {
	switch c.Mechanism {
	case "PLAIN":
		return kgo.SASL(plain.Auth{User: c.Username, Pass: c.Password}.AsMechanism()), nil
	case "SCRAM-SHA-256":
		return kgo.SASL(scram.Auth{User: c.Username, Pass: c.Password}.AsSha256Mechanism()), nil
	case "SCRAM-SHA-512":
		return kgo.SASL(scram.Auth{User: c.Username, Pass: c.Password}.AsSha512Mechanism()), nil
	}
	return nil, fmt.Errorf("unknown mechanism %q", c.Mechanism)
}

func run(c aclCase) (r result) {
	started := time.Now()
	r = result{Case: c.Name}
	defer func() { r.ElapsedMs = time.Since(started).Milliseconds() }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(c.TimeoutMs)*time.Millisecond)
	defer cancel()
	sasl, err := saslOpt(c)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(c.Bootstrap, ",")...), sasl}
	switch c.Action {
	case "produce":
		err = produce(ctx, c, opts, &r)
	case "consume":
		err = consume(ctx, c, opts, &r)
	default:
		err = fmt.Errorf("unknown action %q", c.Action)
	}
	if err == nil {
		r.OK = true
		return r
	}
	r.Error = err.Error()
	var ke *kerr.Error
	if errors.As(err, &ke) {
		r.KerrCode, r.KerrMessage = ke.Code, ke.Message
	}
	r.IsTopicAuthorizationFailed = errors.Is(err, kerr.TopicAuthorizationFailed)
	r.IsGroupAuthorizationFailed = errors.Is(err, kerr.GroupAuthorizationFailed)
	return r
}

func produce(ctx context.Context, c aclCase, opts []kgo.Opt, r *result) error {
	opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if !c.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	for i := 0; i < c.Count; i++ {
		record := &kgo.Record{Topic: c.Topic, Partition: 0, Value: []byte("franz-" + c.Name + "-" + strconv.Itoa(i))}
		if err := client.ProduceSync(ctx, record).FirstErr(); err != nil {
			return err
		}
		r.Done++
	}
	return nil
}

func consume(ctx context.Context, c aclCase, opts []kgo.Opt, r *result) error {
	opts = append(opts, kgo.ConsumerGroup(c.Group), kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	client, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	for r.Done < c.Count {
		fetches := client.PollFetches(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			return errs[0].Err
		}
		r.Done += fetches.NumRecords()
	}
	return nil
}
