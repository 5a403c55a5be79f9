"""In the manner of the classic PyTorch sentiment-analysis tutorials (an "upgraded" RNN
classifier): nn.Embedding with a padding index, a two-layer bidirectional nn.LSTM with
dropout over packed sequences (nn.utils.rnn.pack_padded_sequence), the last hidden states of
both directions concatenated into nn.Linear, BCEWithLogitsLoss, Adam, gradient clipping with
clip_grad_norm_, and binary accuracy. Token ids from a seeded NumPy generator (the label says
whether token 7 occurs); weights from torch.manual_seed."""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(1234)
rng = np.random.RandomState(0)
VOCAB, PAD = 20, 0
lengths = np.array([9, 8, 8, 6, 5, 5, 3, 2])
tokens = np.zeros((8, 9), dtype=np.int64)
for row, n in enumerate(lengths):
    tokens[row, :n] = rng.randint(1, VOCAB, size=n)
labels = np.array([float((row[:n] == 7).any()) for row, n in zip(tokens, lengths)],
                  dtype=np.float32)


class RNN(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, n_layers,
                 bidirectional, dropout, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers,
                           bidirectional=bidirectional, dropout=dropout)
        self.fc = nn.Linear(hidden_dim * 2, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text, text_lengths):
        embedded = self.dropout(self.embedding(text))
        packed = nn.utils.rnn.pack_padded_sequence(embedded, text_lengths)
        packed_output, (hidden, cell) = self.rnn(packed)
        hidden = self.dropout(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return self.fc(hidden)


model = RNN(VOCAB, 6, 5, 1, 2, True, 0.0, PAD)
print(sum(p.numel() for p in model.parameters() if p.requires_grad), "trainable parameters")
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
criterion = nn.BCEWithLogitsLoss()


def binary_accuracy(preds, y):
    rounded_preds = torch.round(torch.sigmoid(preds))
    correct = (rounded_preds == y).float()
    return correct.sum() / len(correct)


text = torch.from_numpy(tokens).t()  # [sentence length, batch size]
text_lengths = torch.from_numpy(lengths)
y = torch.from_numpy(labels)
for epoch in range(6):
    model.train()
    optimizer.zero_grad()
    predictions = model(text, text_lengths).squeeze(1)
    loss = criterion(predictions, y)
    acc = binary_accuracy(predictions, y)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"Epoch: {epoch + 1:02} | Train Loss: {loss.item():.4f} | "
          f"Train Acc: {acc.item() * 100:.2f}%")

model.eval()
with torch.no_grad():
    predictions = model(text, text_lengths).squeeze(1)
print("final accuracy:", binary_accuracy(predictions, y).item())
