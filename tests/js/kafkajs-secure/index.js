// kafkajs over each of Ferry's secure listeners, for tests/integration/test_security_clients.py.
//
//   node index.js CASES
//
// CASES is a JSON file holding a list of cases (the same shape as tests/go/franz-secure's): {name, bootstrap,
// security_protocol (SSL, SASL_PLAINTEXT or SASL_SSL), mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512),
// username, password, ca, cert, key (PEM files), topic, partitions, transactional_id, group, committed_per_txn,
// aborted, timeout_ms}. The cases run at once. Per case, a transactional producer commits committed_per_txn
// records, aborts `aborted`, and commits committed_per_txn more (record i of a transaction to partition
// i mod partitions, so every transaction touches every partition); then a consumer in `group` with
// read_committed isolation reads the topic until it has every committed record, or until the case's timeout,
// and commits its offsets. One JSON line per case on stdout: {"case", "ok", "sent_committed", "sent_aborted",
// "consumed": [...]} (with "stage" and "error" when it failed); exit status 1 if any failed. kafkajs's own log
// goes to stderr.
'use strict'

const fs = require('fs')
const { Kafka, Partitioners, logLevel } = require('kafkajs')

const stderrLog = () => ({ namespace, level, label, log }) => {
  const { message, ...extra } = log
  process.stderr.write(`${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

function clientConfig (c) {
  const config = {
    clientId: `ferry-${c.name}`,
    brokers: c.bootstrap.split(','),
    connectionTimeout: 10000,
    requestTimeout: 30000,
    logLevel: logLevel.WARN,
    logCreator: stderrLog,
    retry: { retries: 10 }
  }
  if (c.security_protocol === 'SSL' || c.security_protocol === 'SASL_SSL') {
    config.ssl = { ca: [fs.readFileSync(c.ca, 'utf8')] }
    if (c.cert) {
      config.ssl.cert = fs.readFileSync(c.cert, 'utf8')
      config.ssl.key = fs.readFileSync(c.key, 'utf8')
    }
  }
  if (c.security_protocol.startsWith('SASL_')) {
    config.sasl = { mechanism: c.mechanism.toLowerCase(), username: c.username, password: c.password }
  }
  return config
}

function withDeadline (promise, deadline, what) {
  let timer
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), Math.max(deadline - Date.now(), 0))
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

async function produce (kafka, c, result, deadline) {
  // Every record names its partition; the partitioner is named only to keep kafkajs from warning about its default.
  const producer = kafka.producer({ transactionalId: c.transactional_id, idempotent: true, maxInFlightRequests: 1,
    transactionTimeout: 30000, createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  try {
    // committed, aborted, committed: the aborted records lie between committed ones in every partition.
    let next = 0
    for (let txn = 0; txn < 3; txn++) {
      const commit = txn !== 1
      const count = commit ? c.committed_per_txn : c.aborted
      const transaction = await producer.transaction()
      const messages = []
      for (let i = 0; i < count; i++) {
        messages.push({ partition: i % c.partitions, value: commit ? `c-${next + i}` : `a-${i}` })
      }
      await withDeadline(transaction.send({ topic: c.topic, acks: -1, messages }), deadline, 'send')
      if (commit) {
        await withDeadline(transaction.commit(), deadline, 'commit')
        next += count
        result.sent_committed += count
      } else {
        await withDeadline(transaction.abort(), deadline, 'abort')
        result.sent_aborted += count
      }
    }
  } finally {
    await producer.disconnect()
  }
}

async function consume (kafka, c, result, deadline) {
  const consumer = kafka.consumer({ groupId: c.group, readUncommitted: false, maxWaitTimeInMs: 500,
    sessionTimeout: 30000, heartbeatInterval: 1000 })
  await consumer.connect()
  try {
    await consumer.subscribe({ topic: c.topic, fromBeginning: true })
    const next = {} // partition -> the offset after the last record read
    let done
    const all = new Promise(resolve => { done = resolve })
    if (result.sent_committed === 0) done()
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        result.consumed.push(message.value.toString())
        next[partition] = (BigInt(message.offset) + 1n).toString()
        if (result.consumed.length >= result.sent_committed) done()
      }
    })
    await withDeadline(all, deadline,
      `consuming: ${result.consumed.length} of ${result.sent_committed} records by the deadline`)
    result.stage = 'commit'
    await withDeadline(consumer.commitOffsets(Object.entries(next).map(([partition, offset]) =>
      ({ topic: c.topic, partition: Number(partition), offset }))), deadline, 'commitOffsets')
    result.committed_offsets = next
  } finally {
    await consumer.disconnect()
  }
}

async function runCase (c) {
  const started = Date.now()
  const deadline = started + c.timeout_ms
  const result = { case: c.name, ok: false, stage: 'produce', sent_committed: 0, sent_aborted: 0, consumed: [] }
  try {
    const kafka = new Kafka(clientConfig(c))
    await produce(kafka, c, result, deadline)
    result.stage = 'consume'
    await consume(kafka, c, result, deadline)
    result.ok = true
    delete result.stage
  } catch (e) {
    result.error = String(e && e.stack ? e.stack : e)
    process.stderr.write(`case ${c.name} failed in ${result.stage}: ${result.error}\n`)
  }
  result.elapsed_ms = Date.now() - started
  process.stdout.write(JSON.stringify(result) + '\n')
  return result.ok
}

async function main () {
  if (process.argv.length !== 3) {
    process.stderr.write('usage: node index.js CASES\n')
    process.exit(2)
  }
  const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
  const ok = await Promise.all(cases.map(runCase))
  process.exit(ok.every(Boolean) ? 0 : 1)
}

main()
