"""The stdio runtime against a real plugin process (docs/protocol/v2.md sections 3 and 4)."""

import os
import subprocess
import sys
import time
import unittest

from host_sdk_v2 import RpcErrorCode

from .support import FIXTURES, StdioHost, cmd, fixture_env, init_params, message_event

ECHO = os.path.join(FIXTURES, "echo")


class StdioRuntimeTest(unittest.TestCase):
    def setUp(self) -> None:
        self.host = StdioHost(ECHO)

    def tearDown(self) -> None:
        self.host.kill()

    def test_handshake_answers_with_the_plugin_and_sdk(self) -> None:
        result = self.host.initialize()["result"]
        self.assertEqual(result["protocolVersion"], 2)
        self.assertEqual(result["pluginId"], "com.example.pyecho")
        self.assertEqual(result["sdkName"], "host_sdk_v2")
        self.assertEqual(result["encoding"], "json")
        self.assertIn("settings.changed", result["capabilities"])

    def test_requests_before_the_handshake_are_refused_and_a_second_handshake_too(self) -> None:
        early = self.host.call("plugin.ping", {})
        self.assertEqual(early["error"]["code"], RpcErrorCode.NotInitialized)
        self.host.initialize()
        again = self.host.call("host.initialize", init_params())
        self.assertEqual(again["error"]["code"], RpcErrorCode.AlreadyInitialized)

    def test_a_handshake_for_another_plugin_is_refused_and_the_process_exits(self) -> None:
        answer = self.host.call("host.initialize", init_params("com.example.other"))
        self.assertEqual(answer["error"]["code"], RpcErrorCode.PluginError)
        self.assertEqual(self.host.exit_code(), 1)

    def test_invalid_handshake_params_get_invalid_params_with_issues(self) -> None:
        params = init_params()
        del params["token"]
        answer = self.host.call("host.initialize", params)
        self.assertEqual(answer["error"]["code"], RpcErrorCode.InvalidParams)
        self.assertEqual(answer["error"]["data"]["issues"][0]["path"], "token")

    def test_an_event_is_acked_replied_to_and_completed_in_that_order(self) -> None:
        self.host.initialize()
        rid = self.host.request("events.message", message_event("e1", "/echo <b>hi</b>", cmd("echo", "<b>hi</b>")))
        ack = self.host.response(rid)["result"]
        self.assertEqual(ack, {"eventId": "e1", "accepted": True, "intercepted": False, "error": None})
        completed = self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.assertEqual(completed[0]["params"]["eventId"], "e1")
        self.assertIsNone(completed[0]["params"]["error"])
        reply = self.host.requests_of("messages.reply")[0]["params"]
        self.assertEqual(reply["token"], "t" * 40)
        self.assertEqual(reply["message"]["format"], "markdown")
        self.assertEqual(reply["message"]["parts"][0], {"type": "mention", "target": "user", "id": "u1", "displayName": "Alice"})
        self.assertEqual(reply["message"]["parts"][1], {"type": "text", "text": " said: "})
        self.assertEqual(reply["message"]["parts"][2], {"type": "text", "text": "<b>hi</b>", "literal": True})
        order = [r["method"] for r in self.host.requests]
        self.assertLess(order.index("messages.reply"), order.index("events.completed"))

    def test_an_async_handler_replies_with_the_current_settings(self) -> None:
        self.host.initialize()
        self.host.response(self.host.request("events.message", message_event("e1", "/aecho x", cmd("aecho", "x"))))
        self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.assertEqual(self.host.requests_of("messages.reply")[0]["params"]["message"]["parts"], [{"type": "text", "text": "hi x"}])
        applied = self.host.call("settings.changed", {"settings": {"greeting": "hello"}})
        self.assertEqual(applied["result"], {"applied": True})
        self.host.response(self.host.request("events.message", message_event("e2", "/aecho y", cmd("aecho", "y"))))
        self.host.wait(lambda: len(self.host.requests_of("events.completed")) == 2)
        self.assertEqual(self.host.requests_of("messages.reply")[1]["params"]["message"]["parts"], [{"type": "text", "text": "hello y"}])

    def test_print_and_stdout_writes_go_to_stderr_never_to_the_protocol_stream(self) -> None:
        self.host.initialize()
        self.host.response(self.host.request("events.message", message_event("e1", "/print a", cmd("print", "a"))))
        self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.host.wait(lambda: any("never to the protocol stream" in line for line in self.host.stderr))
        self.assertEqual(self.host.errors, [])
        log = self.host.requests_of("log.write")[0]["params"]
        self.assertEqual((log["level"], log["message"], log["fields"]), ("info", "logged", {"args": "a"}))
        # The handler's logger names its event (v2.md 4.5), so the host can show the line with it.
        self.assertEqual(log["eventId"], "e1")

    def test_a_failing_handler_reports_its_code_in_the_completion(self) -> None:
        self.host.initialize()
        self.host.response(self.host.request("events.message", message_event("e1", "/fail", cmd("fail"))))
        completed = self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.assertEqual(completed[0]["params"]["error"], {"code": "echo.failed", "message": "asked to fail"})

    def test_an_event_no_handler_takes_is_declined_at_once(self) -> None:
        self.host.initialize()
        ack = self.host.call("events.message", message_event("e1", "hello"))["result"]
        self.assertEqual(ack["accepted"], False)

    def test_events_beyond_max_concurrent_events_are_overloaded_and_pings_answer_while_handlers_run(self) -> None:
        self.host.initialize(maxConcurrentEvents=2)
        for i in (1, 2):
            self.host.response(self.host.request("events.message", message_event(f"s{i}", "/slow", cmd("slow"))))
        third = self.host.call("events.message", message_event("s3", "/slow", cmd("slow")))
        self.assertEqual(third["error"]["code"], RpcErrorCode.Overloaded)
        ping = self.host.call("plugin.ping", {"nonce": "n1"}, timeout=2)["result"]
        self.assertEqual(ping, {"nonce": "n1", "inFlightEvents": 2, "queuedEvents": 0})

    def test_sync_handlers_that_block_do_not_hold_up_the_events_behind_them(self) -> None:
        # Quick sync handlers of a burst share a thread; handlers that block get threads of their own
        # once the queue stops moving, so the echo behind three blocked handlers still completes.
        self.host.initialize(maxConcurrentEvents=4)
        for i in (1, 2, 3):
            self.host.request("events.message", message_event(f"s{i}", "/slow 30", cmd("slow", "30")))
        self.host.request("events.message", message_event("e4", "/echo x", cmd("echo", "x")))
        completed = self.host.wait(lambda: self.host.requests_of("events.completed"), timeout=10)
        self.assertEqual([c["params"]["eventId"] for c in completed], ["e4"])
        ping = self.host.call("plugin.ping", {"nonce": "n"}, timeout=5)["result"]
        self.assertEqual(ping["inFlightEvents"], 3)
        for i in (1, 2, 3):
            self.assertEqual(self.host.call("events.cancel", {"eventId": f"s{i}", "reason": "deadline"})["result"], {"cancelled": True})
        self.host.wait(lambda: len(self.host.requests_of("events.completed")) == 4 or None, timeout=10)

    def test_a_sync_handler_that_blocks_on_the_loops_thread_hands_over_and_runs_on_a_worker_thread_after(self) -> None:
        # Quick sync handlers run on the event loop's thread. The first /sleep blocks there without an
        # SDK wait: the runtime notices, and pings and the events behind it are still served.
        self.host.initialize(maxConcurrentEvents=4)
        self.host.response(self.host.request("events.message", message_event("z1", "/sleep 3", cmd("sleep", "3"))))
        self.host.request("events.message", message_event("e2", "/echo x", cmd("echo", "x")))
        completed = self.host.wait(lambda: self.host.requests_of("events.completed"), timeout=2)
        self.assertEqual([c["params"]["eventId"] for c in completed], ["e2"])
        ping = self.host.call("plugin.ping", {"nonce": "n"}, timeout=1)["result"]
        self.assertEqual(ping["inFlightEvents"], 1)
        self.host.wait(lambda: len(self.host.requests_of("events.completed")) == 2 or None, timeout=10)
        self.host.response(self.host.request("events.message", message_event("z3", "/sleep 0", cmd("sleep", "0"))))
        self.host.wait(lambda: len(self.host.requests_of("events.completed")) == 3 or None)
        texts = [r["params"]["message"]["parts"][0]["text"] for r in self.host.requests_of("messages.reply") if r["params"]["eventId"] != "e2"]
        self.assertEqual(texts, ["slept on MainThread", "slept on host-sdk-handler"])
        notes = [line for line in self.host.stderr if "runs on worker threads from now on" in line]
        self.assertEqual(len(notes), 1)
        self.assertIn("sleeping", notes[0])

    def test_asyncio_run_works_inside_a_sync_handler(self) -> None:
        self.host.initialize()
        self.host.response(self.host.request("events.message", message_event("n1", "/nested ab", cmd("nested", "ab"))))
        completed = self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.assertIsNone(completed[0]["params"]["error"])
        self.assertEqual(self.host.requests_of("messages.reply")[0]["params"]["message"]["parts"][0]["text"], "abab")

    def test_events_cancel_cancels_a_running_handler(self) -> None:
        self.host.initialize()
        self.host.response(self.host.request("events.message", message_event("s1", "/slow", cmd("slow"))))
        answer = self.host.call("events.cancel", {"eventId": "s1", "reason": "ackTimeout"})
        self.assertEqual(answer["result"], {"cancelled": True})
        self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.assertEqual(self.host.requests_of("messages.reply")[0]["params"]["message"]["parts"][0]["text"], "cancelled")
        unknown = self.host.call("events.cancel", {"eventId": "nope", "reason": "deadline"})
        self.assertEqual(unknown["result"], {"cancelled": False})

    def test_the_handler_deadline_cancels_a_handler_that_runs_too_long(self) -> None:
        self.host.initialize(handlerDeadlineMilliseconds=300)
        self.host.response(self.host.request("events.message", message_event("s1", "/slow", cmd("slow"))))
        self.host.wait(lambda: self.host.requests_of("events.completed"), timeout=5)
        self.assertEqual(self.host.requests_of("messages.reply")[0]["params"]["message"]["parts"][0]["text"], "cancelled")

    def test_plugin_stop_finishes_running_handlers_refuses_new_events_and_exits_0(self) -> None:
        self.host.initialize()
        self.host.response(self.host.request("events.message", message_event("s1", "/slow", cmd("slow"))))
        self.assertEqual(self.host.call("plugin.stop", {"reason": "operator", "graceMilliseconds": 3000})["result"], {"accepted": True})
        late = self.host.request("events.message", message_event("e9", "/echo x", cmd("echo", "x")))
        self.assertEqual(self.host.exit_code(), 0)
        self.assertEqual(self.host.requests_of("events.completed")[0]["params"]["eventId"], "s1")
        answer = self.host.responses.get(late)
        self.assertTrue(answer is None or answer["error"]["code"] == RpcErrorCode.Stopping)

    def test_the_process_exits_when_stdin_closes(self) -> None:
        self.host.initialize()
        self.host.response(self.host.request("events.message", message_event("s1", "/slow", cmd("slow"))))
        self.host.close_stdin()
        self.assertEqual(self.host.exit_code(timeout=5), 0)

    def test_unknown_methods_and_invalid_events_get_errors(self) -> None:
        self.host.initialize()
        self.assertEqual(self.host.call("plugin.dance", {})["error"]["code"], RpcErrorCode.MethodNotFound)
        bad = self.host.call("events.message", {"eventId": "x"})
        self.assertEqual(bad["error"]["code"], RpcErrorCode.InvalidParams)
        self.assertTrue(bad["error"]["data"]["issues"])

    def test_a_broken_frame_from_the_host_ends_the_process_with_1(self) -> None:
        self.host.initialize()
        self.host.write_raw(b"hello there\r\n\r\n")
        self.assertEqual(self.host.exit_code(), 1)
        self.assertTrue(any("framing.header" in line for line in self.host.stderr))

    def test_handler_threads_wait_while_the_host_does_not_read_stdout(self) -> None:
        self.host.initialize()
        self.host.reading.clear()
        self.host.request("events.message", message_event("f1", "/flood 5000", cmd("flood", "5000")))
        time.sleep(3)
        progress = [int(line.split()[1]) for line in list(self.host.stderr) if line.startswith("flood ") and line.split()[1].isdigit()]
        self.assertTrue(progress)
        # About 9 MiB of unsent frames (3 KB each) and the pipe's own buffer, then the handler waits.
        self.assertLess(max(progress), 4000)
        self.assertFalse(any(line.startswith("flood done") for line in self.host.stderr))
        self.host.reading.set()
        self.host.wait(lambda: self.host.requests_of("events.completed"), timeout=60)
        self.assertEqual(len(self.host.requests_of("messages.reply")), 5000)

    def test_a_refused_reply_fails_the_handler_with_the_hosts_message_code(self) -> None:
        self.host.refuse = lambda m: (
            {"code": RpcErrorCode.MessageRejected, "message": "refused", "data": {"code": "message.reference.unknown"}} if m["method"] == "messages.reply" else None
        )
        self.host.initialize()
        self.host.response(self.host.request("events.message", message_event("s1", "/slow 0", cmd("slow", "0"))))
        completed = self.host.wait(lambda: self.host.requests_of("events.completed"))
        self.assertEqual(completed[0]["params"]["error"]["code"], "message.reference.unknown")

    def test_a_send_inside_a_handler_names_its_event_and_one_outside_does_not(self) -> None:
        params = init_params()
        params["settings"] = {"startSendTo": "g-start"}
        self.host.call("host.initialize", params)
        outside = self.host.wait(lambda: self.host.requests_of("messages.send"))[0]["params"]
        self.assertEqual(outside["target"], {"type": "group", "id": "g-start"})
        self.assertNotIn("eventId", outside)
        self.host.response(self.host.request("events.message", message_event("e7", "/send g-9", cmd("send", "g-9"))))
        self.host.wait(lambda: self.host.requests_of("events.completed"))
        inside = self.host.requests_of("messages.send")[1]["params"]
        self.assertEqual(inside["eventId"], "e7")
        self.assertEqual(inside["target"], {"type": "group", "id": "g-9", "botAccountId": "bot-1"})
        self.assertEqual(inside["message"], {"format": "text", "parts": [{"type": "text", "text": "from a handler"}]})


class ProtocolModeTest(unittest.TestCase):
    def test_without_host_stdio_it_prints_help_to_stderr_and_exits_2(self) -> None:
        proc = subprocess.run([sys.executable, "plugin.py"], cwd=ECHO, env=fixture_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(proc.stdout, b"")
        self.assertIn(b"--host-stdio", proc.stderr)


if __name__ == "__main__":
    unittest.main()
