// kafkajs under Ferry's ACLs, for tests/integration/test_acls.py; it uses this package's kafkajs.
//
//   node acl.js CASES
//
// CASES is a JSON file holding a list of cases (the same shape as tests/go/franz-acl's): {name, bootstrap,
// mechanism (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), username, password, action ("produce"), topic, count,
// timeout_ms}, over SASL_PLAINTEXT. The cases run at once. Each produces `count` records to partition 0 of
// `topic` (record i is "kafkajs-NAME-i"), one send each, with the non-idempotent producer (kafkajs's default). One JSON line per case on
// stdout: {"case", "ok", "done" (records sent), "error" (the message), "errors": [{name, type, code, retriable,
// message}, ...]} where "errors" is the error kafkajs threw followed by its causes (a KafkaJSNumberOfRetriesExceeded
// wraps what the last try got). The exit status is 0 once every case ran, whatever their outcomes: the test
// decides which outcome is right. kafkajs's own log goes to stderr.
'use strict'

const fs = require('fs')
const { Kafka, Partitioners, logLevel } = require('kafkajs')

const stderrLog = () => ({ namespace, level, label, log }) => {
  const { message, ...extra } = log
  process.stderr.write(`${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

function clientConfig (c) {
  return {
    clientId: `ferry-acl-${c.name}`,
    brokers: c.bootstrap.split(','),
    connectionTimeout: 10000,
    requestTimeout: 30000,
    logLevel: logLevel.WARN,
    logCreator: stderrLog,
    retry: { retries: 3 },
    sasl: { mechanism: c.mechanism.toLowerCase(), username: c.username, password: c.password }
  }
}

function withDeadline (promise, deadline, what) {
  let timer
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), Math.max(deadline - Date.now(), 0))
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

// The error and its causes, outermost first.
function errorChain (e) {
  const out = []
  for (let err = e; err && out.length < 10; err = err.cause || err.originalError) {
    out.push({ name: err.name, type: err.type, code: err.code, retriable: err.retriable, message: String(err.message) })
  }
  return out
}

async function produce (kafka, c, result, deadline) {
  // Every record names its partition; the partitioner is named only to keep kafkajs from warning about its default.
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await withDeadline(producer.connect(), deadline, 'connect')
  try {
    for (let i = 0; i < c.count; i++) {
      await withDeadline(producer.send({ topic: c.topic, acks: -1, messages: [{ partition: 0, value: `kafkajs-${c.name}-${i}` }] }),
        deadline, 'send')
      result.done++
    }
  } finally {
    await producer.disconnect()
  }
}

async function runCase (c) {
  const started = Date.now()
  const deadline = started + c.timeout_ms
  const result = { case: c.name, ok: false, done: 0 }
  try {
    if (c.action !== 'produce') throw new Error(`unknown action ${c.action}`)
    await produce(new Kafka(clientConfig(c)), c, result, deadline)
    result.ok = true
  } catch (e) {
    result.error = String(e && e.message ? e.message : e)
    result.errors = errorChain(e)
    process.stderr.write(`case ${c.name}: ${e && e.stack ? e.stack : e}\n`)
  }
  result.elapsed_ms = Date.now() - started
  process.stdout.write(JSON.stringify(result) + '\n')
}

async function main () {
  if (process.argv.length !== 3) {
    process.stderr.write('usage: node acl.js CASES\n')
    process.exit(2)
  }
  const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
  await Promise.all(cases.map(runCase))
  process.exit(0)
}

main()
