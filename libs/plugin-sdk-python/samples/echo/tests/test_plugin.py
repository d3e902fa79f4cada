import os
import unittest

from host_sdk_v2.testing import TestHost

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from plugin import plugin  # noqa: E402


class EchoTest(unittest.TestCase):
    def test_echo_mentions_the_sender_in_markdown(self):
        delivery = TestHost(plugin).send("/echo hello")
        self.assertTrue(delivery.ack["accepted"])
        assert delivery.completion is not None
        self.assertIsNone(delivery.completion["error"])
        self.assertEqual(delivery.replies[0].body, {"msg_type": 2, "markdown": {"content": '<qqbot-at-user id="user-1" /> said: **hello**'}})

    def test_one_to_one_chats_get_text(self):
        delivery = TestHost(plugin).send("/echo hi", conversation="c2c")
        self.assertEqual(delivery.replies[0].body, {"msg_type": 0, "content": "You said: hi"})


if __name__ == "__main__":
    unittest.main()
