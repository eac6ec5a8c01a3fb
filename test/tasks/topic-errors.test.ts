// Creating the world's topics retries only while the broker says a topic of that name is still
// there (TOPIC_ALREADY_EXISTS, also its answer for a topic marked for deletion), decided by the
// kafkajs error's type, never by its message. No service: kafkajs' own error classes.
import assert from "node:assert/strict";
import { test } from "node:test";
import kafkajs from "kafkajs";
import { topicStillThere } from "../../tasks/topics.ts";

const { KafkaJSAggregateError, KafkaJSProtocolError } = kafkajs;

/** What kafkajs puts in its aggregate per topic (a KafkaJSCreateTopicError is a KafkaJSProtocolError with the topic). */
function brokerSaid(type: string, code: number, topic: string): Error {
  return Object.assign(new KafkaJSProtocolError({ type, code, retriable: false, message: "some words" } as never), { topic });
}

test("TOPIC_ALREADY_EXISTS for every topic means 'still there', whatever the words", () => {
  const exists = new KafkaJSAggregateError("Topic creation errors", [brokerSaid("TOPIC_ALREADY_EXISTS", 36, "hits"), brokerSaid("TOPIC_ALREADY_EXISTS", 36, "orders")]);
  assert.equal(topicStillThere(exists), true);
  assert.equal(topicStillThere(brokerSaid("TOPIC_ALREADY_EXISTS", 36, "hits")), true);
});

test("any other answer, or a message that only says 'already exists', is a failure to report", () => {
  const mixed = new KafkaJSAggregateError("Topic creation errors", [brokerSaid("TOPIC_ALREADY_EXISTS", 36, "hits"), brokerSaid("INVALID_REPLICATION_FACTOR", 38, "orders")]);
  assert.equal(topicStillThere(mixed), false);
  assert.equal(topicStillThere(new Error("Topic 'hits' already exists")), false);
  assert.equal(topicStillThere(new KafkaJSAggregateError("Topic creation errors", [])), false);
  assert.equal(topicStillThere("TOPIC_ALREADY_EXISTS"), false);
});
