// Command franz-static is franz-go's classic group consumer with static members (KIP-345) under churn, for
// tests/integration/test_static_members.py. Four members of one group, instance ids "static-0" .. "static-3",
// consume TOPIC with the cooperative-sticky balancer while a producer (idempotent, acks=all) writes COUNT distinct
// records ("rec-0" .. "rec-<COUNT-1>", keyed so that they spread over the partitions) across the run. For DURATION,
// rounds a few hundred milliseconds apart pick one to four idle members at once (seeded by SEED) and:
//
//   - restart them: commit, close (a static member does not leave the group on close) and start a new client with
//     the same instance id, which replaces the old member at the coordinator;
//   - make them leave: commit, LeaveGroupContext, close, then one LeaveGroup naming all their instance ids (what
//     kafka-consumer-groups --delete-members sends, and how franz-go documents leaving with an instance id), and
//     start them again a moment later;
//   - remove them while they run: the same LeaveGroup for members that keep going, which learn it from their next
//     heartbeat and join again under their instance id.
//
// Rounds overlap: a member restarting or rejoining while others leave is the point. Offsets are committed as the
// members go (autocommit of marked records, and a commit before each close). Once DURATION is over every member runs
// again and they drain the topic until each acknowledged record was seen at least once (at most 25 s). It prints one
// JSON line (produced, consumed, restarts, leaves, kicks, errors, ...) and exits 0 only when every record was produced
// and every produced record was consumed. Every step has a timeout, and a watchdog ends the program at DURATION+60s.
//
// usage: franz-static BOOTSTRAP TOPIC GROUP DURATION COUNT [SEED]     (DURATION as Go parses it: 55s)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	members          = 4
	sessionTimeout   = 10 * time.Second
	rebalanceTimeout = 5 * time.Second
	drainTimeout     = 25 * time.Second
	stepTimeout      = 15 * time.Second // any one close, commit or leave
)

type run struct {
	seeds []string
	topic string
	group string

	consumedMu sync.Mutex
	consumed   []bool // by record index
	distinct   int

	produced  atomic.Int64
	restarts  atomic.Int64
	leaves    atomic.Int64 // members the coordinator removed for one of our LeaveGroup requests
	kicks     atomic.Int64 // of those, members removed while they ran
	leaveReqs atomic.Int64
	rounds    atomic.Int64
	starts    atomic.Int64

	errMu  sync.Mutex
	errs   int
	kinds  map[string]int
	admin  *kgo.Client
	wanted int
}

func (r *run) noteErr(what string, err error) {
	if err == nil {
		return
	}
	kind := what + ": " + err.Error()
	if len(kind) > 100 {
		kind = kind[:100]
	}
	r.errMu.Lock()
	r.errs++
	r.kinds[kind]++
	r.errMu.Unlock()
}

func (r *run) seen(value []byte) {
	i, err := strconv.Atoi(strings.TrimPrefix(string(value), "rec-"))
	if err != nil || i < 0 || i >= r.wanted {
		r.noteErr("consume", fmt.Errorf("unexpected record %q", value))
		return
	}
	r.consumedMu.Lock()
	if !r.consumed[i] {
		r.consumed[i] = true
		r.distinct++
	}
	r.consumedMu.Unlock()
}

func (r *run) distinctConsumed() int {
	r.consumedMu.Lock()
	defer r.consumedMu.Unlock()
	return r.distinct
}

// member is one instance id; its client comes and goes.
type member struct {
	r        *run
	instance string
	busy     atomic.Bool // a round is restarting it or making it leave

	mu     sync.Mutex
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
}

func (m *member) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cl != nil {
		return
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(m.r.seeds...),
		kgo.ConsumerGroup(m.r.group),
		kgo.ConsumeTopics(m.r.topic),
		kgo.InstanceID(m.instance),
		kgo.SessionTimeout(sessionTimeout),
		kgo.RebalanceTimeout(rebalanceTimeout),
		kgo.HeartbeatInterval(time.Second),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(500*time.Millisecond),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.RetryTimeout(10*time.Second),
	)
	if err != nil {
		m.r.noteErr("new client", err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.cl, m.cancel, m.done = cl, cancel, make(chan struct{})
	m.r.starts.Add(1)
	go m.poll(ctx, cl, m.done)
}

func (m *member) poll(ctx context.Context, cl *kgo.Client, done chan struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fetches := cl.PollRecords(pctx, 1000)
		cancel()
		fetches.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
				!errors.Is(err, kgo.ErrClientClosed) {
				m.r.noteErr("fetch", err)
			}
		})
		records := fetches.Records()
		for _, rec := range records {
			m.r.seen(rec.Value)
		}
		cl.MarkCommitRecords(records...)
	}
}

// stop commits what the member marked and closes its client; with leave, it asks franz-go to leave the group first
// (which, for a static member, it does only after a cooperative revoke it has not rejoined from).
func (m *member) stop(leave bool) {
	m.mu.Lock()
	cl, cancel, done := m.cl, m.cancel, m.done
	m.cl = nil
	m.mu.Unlock()
	if cl == nil {
		return
	}
	cancel()
	select {
	case <-done:
	case <-time.After(stepTimeout):
		m.r.noteErr("stop", errors.New("poll loop did not stop"))
	}
	ctx, cancelCommit := context.WithTimeout(context.Background(), 5*time.Second)
	m.r.noteErr("commit", ignoreExpected(cl.CommitMarkedOffsets(ctx)))
	cancelCommit()
	if leave {
		ctx, cancelLeave := context.WithTimeout(context.Background(), 5*time.Second)
		m.r.noteErr("leave", ignoreExpected(cl.LeaveGroupContext(ctx)))
		cancelLeave()
	}
	closed := make(chan struct{})
	go func() { cl.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(stepTimeout):
		m.r.noteErr("close", errors.New("client close timed out"))
	}
}

// ignoreExpected drops the errors a commit or leave meets as a matter of course while the group rebalances.
func ignoreExpected(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, kerr.RebalanceInProgress) || errors.Is(err, kerr.IllegalGeneration) ||
		errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kgo.ErrClientClosed) {
		return nil
	}
	return err
}

// leaveGroup sends one LeaveGroup naming the members by instance id only (KIP-345 batch leave).
func (r *run) leaveGroup(ms []*member, kick bool) {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = r.group
	for _, m := range ms {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.InstanceID = kmsg.StringPtr(m.instance)
		lm.Reason = kmsg.StringPtr("franz-static churn")
		req.Members = append(req.Members, lm)
	}
	ctx, cancel := context.WithTimeout(context.Background(), stepTimeout)
	defer cancel()
	r.leaveReqs.Add(1)
	resp, err := req.RequestWith(ctx, r.admin)
	if err != nil {
		r.noteErr("leave group", err)
		return
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		r.noteErr("leave group", err)
		return
	}
	for _, lm := range resp.Members {
		switch err := kerr.ErrorForCode(lm.ErrorCode); {
		case err == nil:
			r.leaves.Add(1)
			if kick {
				r.kicks.Add(1)
			}
		case errors.Is(err, kerr.UnknownMemberID): // not (yet, or any longer) in the group
		default:
			r.noteErr("leave group member", err)
		}
	}
}

func (r *run) produce(ctx context.Context, spread time.Duration) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(r.seeds...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(20*time.Second),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	if err != nil {
		r.noteErr("producer", err)
		return
	}
	defer cl.Close()
	var failedMu sync.Mutex
	var failed []int
	send := func(i int) {
		rec := &kgo.Record{Topic: r.topic, Key: []byte(strconv.Itoa(i)), Value: []byte("rec-" + strconv.Itoa(i))}
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				r.noteErr("produce", err)
				failedMu.Lock()
				failed = append(failed, i)
				failedMu.Unlock()
				return
			}
			r.produced.Add(1)
		})
	}
	begin := time.Now()
	for i := 0; i < r.wanted && ctx.Err() == nil; i++ {
		if wait := time.Until(begin.Add(spread * time.Duration(i) / time.Duration(r.wanted))); wait > 0 {
			time.Sleep(wait)
		}
		send(i)
	}
	for attempt := 0; attempt < 3 && ctx.Err() == nil; attempt++ {
		fctx, cancel := context.WithTimeout(ctx, 25*time.Second)
		r.noteErr("flush", cl.Flush(fctx))
		cancel()
		failedMu.Lock()
		retry := failed
		failed = nil
		failedMu.Unlock()
		if len(retry) == 0 {
			return
		}
		for _, i := range retry {
			send(i)
		}
	}
}

func main() {
	if len(os.Args) != 6 && len(os.Args) != 7 {
		fail(errors.New("usage: franz-static BOOTSTRAP TOPIC GROUP DURATION COUNT [SEED]"))
	}
	duration, err := time.ParseDuration(os.Args[4])
	if err != nil {
		fail(err)
	}
	count, err := strconv.Atoi(os.Args[5])
	if err != nil || count <= 0 {
		fail(fmt.Errorf("bad COUNT %q", os.Args[5]))
	}
	seed := uint64(1)
	if len(os.Args) == 7 {
		if seed, err = strconv.ParseUint(os.Args[6], 10, 64); err != nil {
			fail(err)
		}
	}
	r := &run{seeds: strings.Split(os.Args[1], ","), topic: os.Args[2], group: os.Args[3], wanted: count,
		consumed: make([]bool, count), kinds: map[string]int{}}
	began := time.Now()
	summary := func(extra map[string]any) map[string]any {
		r.errMu.Lock()
		kinds := make([]string, 0, len(r.kinds))
		for k, n := range r.kinds {
			kinds = append(kinds, fmt.Sprintf("%d× %s", n, k))
		}
		errs := r.errs
		r.errMu.Unlock()
		sort.Strings(kinds)
		out := map[string]any{
			"wanted": r.wanted, "produced": r.produced.Load(), "consumed": r.distinctConsumed(),
			"restarts": r.restarts.Load(), "leaves": r.leaves.Load(), "kicks": r.kicks.Load(),
			"leave_requests": r.leaveReqs.Load(), "rounds": r.rounds.Load(), "client_starts": r.starts.Load(),
			"errors": errs, "error_kinds": kinds, "seconds": time.Since(began).Seconds(),
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	emit := func(s map[string]any) {
		line, _ := json.Marshal(s)
		fmt.Println(string(line))
	}
	// Whatever happens, the program ends.
	time.AfterFunc(duration+60*time.Second, func() {
		emit(summary(map[string]any{"watchdog": true}))
		os.Exit(3)
	})

	r.admin, err = kgo.NewClient(kgo.SeedBrokers(r.seeds...), kgo.RetryTimeout(10*time.Second))
	if err != nil {
		fail(err)
	}
	defer r.admin.Close()

	ms := make([]*member, members)
	for i := range ms {
		ms[i] = &member{r: r, instance: "static-" + strconv.Itoa(i)}
		ms[i].start()
	}

	pctx, cancelProduce := context.WithTimeout(context.Background(), duration+40*time.Second)
	defer cancelProduce()
	produced := make(chan struct{})
	go func() { r.produce(pctx, duration*4/5); close(produced) }()

	// Churn: rounds of restarts, leaves and removals of several members at once, overlapping.
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var rounds sync.WaitGroup
	end := began.Add(duration)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(200+rng.IntN(1300)) * time.Millisecond)
		var idle []*member
		for _, m := range ms {
			if !m.busy.Load() {
				idle = append(idle, m)
			}
		}
		if len(idle) == 0 {
			continue
		}
		rng.Shuffle(len(idle), func(i, j int) { idle[i], idle[j] = idle[j], idle[i] })
		k := 1 + rng.IntN(min(3, len(idle)))
		if len(idle) == members && rng.IntN(6) == 0 {
			k = members // now and then, the whole group at once
		}
		picked := idle[:k]
		delays := make([]time.Duration, k)
		for i := range delays {
			delays[i] = time.Duration(rng.IntN(1500)) * time.Millisecond
		}
		action := rng.IntN(10)
		r.rounds.Add(1)
		for _, m := range picked {
			m.busy.Store(true)
		}
		rounds.Add(1)
		go func() {
			defer rounds.Done()
			defer func() {
				for _, m := range picked {
					m.busy.Store(false)
				}
			}()
			switch {
			case action < 4: // restart: close without leaving, start again with the same instance id
				var wg sync.WaitGroup
				for i, m := range picked {
					wg.Add(1)
					go func() {
						defer wg.Done()
						m.stop(false)
						time.Sleep(delays[i])
						m.start()
						r.restarts.Add(1)
					}()
				}
				wg.Wait()
			case action < 8: // leave: close, LeaveGroup by instance id, start again
				var wg sync.WaitGroup
				for _, m := range picked {
					wg.Add(1)
					go func() { defer wg.Done(); m.stop(true) }()
				}
				wg.Wait()
				r.leaveGroup(picked, false)
				for i, m := range picked {
					wg.Add(1)
					go func() {
						defer wg.Done()
						time.Sleep(delays[i])
						m.start()
						r.restarts.Add(1)
					}()
				}
				wg.Wait()
			default: // remove running members; they rejoin by themselves
				r.leaveGroup(picked, true)
				time.Sleep(delays[0])
			}
		}()
	}
	waited := make(chan struct{})
	go func() { rounds.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(2 * stepTimeout):
		r.noteErr("churn", errors.New("rounds did not finish"))
	}

	// Drain: every member runs; they read until every acknowledged record was seen.
	for _, m := range ms {
		m.start()
	}
	select {
	case <-produced:
	case <-time.After(drainTimeout):
		r.noteErr("produce", errors.New("producer did not finish"))
	}
	drainEnd := time.Now().Add(drainTimeout)
	for time.Now().Before(drainEnd) && int64(r.distinctConsumed()) < r.produced.Load() {
		time.Sleep(100 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() { defer wg.Done(); m.stop(false) }()
	}
	wg.Wait()

	s := summary(nil)
	emit(s)
	if r.produced.Load() != int64(r.wanted) || int64(r.distinctConsumed()) != r.produced.Load() {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "franz-static:", err)
	os.Exit(2)
}
