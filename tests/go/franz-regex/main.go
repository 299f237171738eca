// Command franz-regex is one member of a KIP-848 consumer group subscribed by regular expression, for
// tests/integration/test_consumer_protocol.py: franz-go with ServerSideBalancer (the next-gen protocol) and
// ConsumeRegex, so the pattern goes to the broker as the heartbeat's SubscribedTopicRegex (franz-go wraps it as
// .*(?:PATTERN).*, since its own regexes match anywhere in a name) and the broker resolves it, topics created later
// included. Offsets are autocommitted. It prints the JSON lines of tests/integration/group_members.py, one per event:
//
//	{"check": "assigned", "partitions": ["topic/0", ...]}   the whole assignment after each change
//	{"check": "record", "topic": "t", "partition": 3, "offset": 17, "value": "..."}
//	{"check": "error", "error": "..."}
//	{"check": "closed"}
//
// until its stdin closes; then it commits what it read, leaves the group and exits.
//
// usage: franz-regex BOOTSTRAP GROUP PATTERN
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

var outMu sync.Mutex

func emit(check string, fields map[string]any) {
	fields["check"] = check
	line, err := json.Marshal(fields)
	if err != nil {
		line = []byte(fmt.Sprintf(`{"check": "error", "error": %q}`, err.Error()))
	}
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Println(string(line))
}

// assignment is what the group gave this member, reported whole after each callback.
type assignment struct {
	mu    sync.Mutex
	owned map[string]map[int32]bool
}

func (a *assignment) change(partitions map[string][]int32, add bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for topic, ps := range partitions {
		if a.owned[topic] == nil {
			a.owned[topic] = map[int32]bool{}
		}
		for _, p := range ps {
			if add {
				a.owned[topic][p] = true
			} else {
				delete(a.owned[topic], p)
			}
		}
	}
	names := []string{}
	for topic, ps := range a.owned {
		for p := range ps {
			names = append(names, fmt.Sprintf("%s/%d", topic, p))
		}
	}
	sort.Strings(names)
	emit("assigned", map[string]any{"partitions": names})
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: franz-regex BOOTSTRAP GROUP PATTERN")
		os.Exit(2)
	}
	owned := &assignment{owned: map[string]map[int32]bool{}}
	client, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(os.Args[1], ",")...),
		kgo.ConsumerGroup(os.Args[2]),
		kgo.ConsumeTopics(os.Args[3]),
		kgo.ConsumeRegex(),
		kgo.ServerSideBalancer(),
		kgo.Balancers(kgo.RangeBalancer()), // the next-gen protocol needs range or sticky: the broker's "range"
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.MetadataMinAge(250*time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { owned.change(p, true) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { owned.change(p, false) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, p map[string][]int32) { owned.change(p, false) }),
	)
	if err != nil {
		emit("error", map[string]any{"error": err.Error()})
		emit("closed", map[string]any{})
		os.Exit(1)
	}

	ctx, stop := context.WithCancel(context.Background())
	go func() {
		buf := make([]byte, 256)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				stop() // only the end of the stream matters
				return
			}
		}
	}()
	for ctx.Err() == nil {
		fetches := client.PollFetches(ctx)
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) {
				emit("error", map[string]any{"error": fmt.Sprintf("%s/%d: %v", topic, partition, err)})
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			emit("record", map[string]any{"topic": r.Topic, "partition": r.Partition, "offset": r.Offset,
				"value": string(r.Value)})
		})
	}
	closing, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := client.CommitUncommittedOffsets(closing); err != nil {
		emit("error", map[string]any{"error": "commit: " + err.Error()})
	}
	client.Close() // leaves the group
	emit("closed", map[string]any{})
}
