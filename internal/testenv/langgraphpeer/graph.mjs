// The graph the LangGraph peer serves (assistant "agent"): one node that
// streams the answer of a fake chat model from @langchain/core
// (FakeListChatModel: its response one character at a time, SLEEP_MS
// apart), so the run's stream has message chunks to measure and to lose.
// The answer's length comes from the last user message: "TCP" (the long
// sample's prompt) gets LONG_ANSWER, any other SHORT_ANSWER; "fail"
// makes the node throw after the answer (an error event).
import { StateGraph, MessagesAnnotation, START, END } from '@langchain/langgraph';
import { FakeListChatModel } from '@langchain/core/utils/testing';

export const SLEEP_MS = 30;
export const SHORT_ANSWER = 'Paris.';
export const LONG_ANSWER = 'TCP opens with SYN, SYN-ACK, ACK; then data.';

function lastText(messages) {
  const m = messages.at(-1);
  return typeof m?.content === 'string' ? m.content : '';
}

async function agent(state) {
  const prompt = lastText(state.messages);
  const answer = prompt.includes('TCP') ? LONG_ANSWER : SHORT_ANSWER;
  const model = new FakeListChatModel({ responses: [answer], sleep: SLEEP_MS });
  const msg = await model.invoke(state.messages);
  if (prompt.includes('fail')) throw new Error('the model is overloaded');
  return { messages: [msg] };
}

export const graph = new StateGraph(MessagesAnnotation).addNode('agent', agent).addEdge(START, 'agent').addEdge('agent', END).compile();
